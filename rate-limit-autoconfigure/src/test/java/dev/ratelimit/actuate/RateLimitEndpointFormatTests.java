package dev.ratelimit.actuate;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Refill;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How the {@code ratelimits} endpoint writes rates, durations and amounts.
 */
class RateLimitEndpointFormatTests {

	@Test
	void refillIsWrittenAsConfigured() {
		assertThat(RateLimitEndpoint.refill(Refill.parse("10/1s"))).isEqualTo("10/1s");
		assertThat(RateLimitEndpoint.refill(Refill.parse("1/10s"))).isEqualTo("1/10s");
		assertThat(RateLimitEndpoint.refill(Refill.parse("5/500ms"))).isEqualTo("5/500ms");
		assertThat(RateLimitEndpoint.refill(Refill.parse("100/1m"))).isEqualTo("100/1m");
		assertThat(RateLimitEndpoint.refill(Refill.parse("2/1h"))).isEqualTo("2/1h");
		assertThat(RateLimitEndpoint.refill(Refill.parse("1/1d"))).isEqualTo("1/1d");
		assertThat(RateLimitEndpoint.refill(Refill.parse("1/7ms"))).isEqualTo("1/7ms");
		assertThat(RateLimitEndpoint.refill(Refill.parse("3/7d"))).isEqualTo("3/7d");
	}

	@Test
	void configuredDurationsUseThePropertySyntax() {
		assertThat(RateLimitEndpoint.duration(0)).isEqualTo("0s");
		assertThat(RateLimitEndpoint.duration(2_000_000)).isEqualTo("2s");
		assertThat(RateLimitEndpoint.duration(300_000_000)).isEqualTo("5m");
		assertThat(RateLimitEndpoint.duration(1_500)).isEqualTo("1500us");
	}

	@Test
	void measuredTimesAreIsoDurations() {
		assertThat(RateLimitEndpoint.isoDuration(0)).isEqualTo("PT0S");
		assertThat(RateLimitEndpoint.isoDuration(1_799_999_873L)).isEqualTo("PT29M59.999873S");
	}

	@Test
	void amountsAreExactDecimalsWithoutTrailingZerosOrExponents() {
		assertThat(RateLimitEndpoint.decimal(50_000_000)).hasToString("50");
		assertThat(RateLimitEndpoint.decimal(1_000_000)).hasToString("1");
		assertThat(RateLimitEndpoint.decimal(250_000)).hasToString("0.25");
		assertThat(RateLimitEndpoint.decimal(2)).hasToString("0.000002");
		assertThat(RateLimitEndpoint.decimal(0)).hasToString("0");
	}

}
