package dev.ratelimit.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How a refill rate is shown: in the unit it was configured in, while its
 * arithmetic and its equality use the rate in lowest terms.
 */
class RefillTests {

	@Test
	void parsedRateIsShownInTheUnitItWasConfiguredIn() {
		assertThat(Refill.parse("1/10s")).hasToString("1/10s");
		assertThat(Refill.parse("10/1s")).hasToString("10/1s");
		assertThat(Refill.parse("5/500ms")).hasToString("5/500ms");
		assertThat(Refill.parse("60/1m")).hasToString("60/1m");
		assertThat(Refill.parse("3/7d")).hasToString("3/7d");
		assertThat(Refill.parse("1000/1d")).hasToString("1000/1d");
	}

	@Test
	void parsedRateIsShownInTheSyntaxParseReads() {
		assertThat(Refill.parse("10/s")).hasToString("10/1s");
		assertThat(Refill.parse(" 5 / 500MS ")).hasToString("5/500ms");
		assertThat(Refill.parse(Refill.parse(" 2 / 90 m ").toString())).hasToString("2/90m");
	}

	@Test
	void rateBuiltInCodeIsShownAsGiven() {
		assertThat(Refill.of(1000, Duration.ofSeconds(1))).hasToString("1000/1s");
		assertThat(Refill.of(1, Duration.ofMillis(1500))).hasToString("1/1500ms");
		assertThat(new Refill(3, 7)).hasToString("3/7us");
		assertThat(new Refill(20, 2_000_000)).hasToString("20/2s");
	}

	@Test
	void arithmeticUsesTheRateInLowestTerms() {
		Refill refill = Refill.parse("1/10s");
		assertThat(refill.tokens()).isEqualTo(1);
		assertThat(refill.periodMicros()).isEqualTo(10_000_000);
		Refill fast = Refill.parse("20/2s");
		assertThat(fast.tokens()).isEqualTo(1);
		assertThat(fast.periodMicros()).isEqualTo(100_000);
		assertThat(fast.microsFor(3)).isEqualTo(300_000);
	}

	@Test
	void ratesAreEqualByRateWhateverTheirUnit() {
		assertThat(Refill.parse("1/10s")).isEqualTo(Refill.parse("6/1m"))
			.hasSameHashCodeAs(Refill.parse("6/1m"))
			.isEqualTo(new Refill(1, 10_000_000));
		assertThat(Refill.parse("1/10s")).isNotEqualTo(Refill.parse("1/11s"));
	}

}
