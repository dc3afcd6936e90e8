package dev.ratelimit.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class RateLimitPolicyTests {

	@Test
	void refillParsesTokensPerPeriodAndReducesToLowestTerms() {
		assertThat(Refill.parse("10/1s")).isEqualTo(new Refill(1, 100_000));
		assertThat(Refill.parse("10/s")).isEqualTo(new Refill(1, 100_000));
		assertThat(Refill.parse("100/1m")).isEqualTo(new Refill(5, 3_000_000));
		assertThat(Refill.parse(" 5 / 500ms ")).isEqualTo(new Refill(1, 100_000));
		assertThat(Refill.parse("1/1d")).isEqualTo(new Refill(1, 86_400_000_000L));
		assertThat(Refill.parse("3/1s").microsFor(1)).isEqualTo(333_334);
	}

	@Test
	void refillRejectsZeroAndGarbageNamingTheAttribute() {
		for (String bad : new String[] { "0/1s", "1/0s", "ten/1s", "1/1w", "", "-1/1s" }) {
			assertThatExceptionOfType(PolicyValidationException.class).isThrownBy(() -> Refill.parse(bad))
				.satisfies((ex) -> assertThat(ex.getAttribute()).isEqualTo("refill"));
		}
	}

	@Test
	void capacityMustBePositive() {
		assertThatExceptionOfType(PolicyValidationException.class)
			.isThrownBy(() -> RateLimitPolicy.builder("p").capacity(0))
			.withMessageContaining("capacity '0'");
	}

	@Test
	void policyNeedsCapacityAndRefill() {
		assertThatExceptionOfType(PolicyValidationException.class)
			.isThrownBy(() -> RateLimitPolicy.builder("p").refill("1/1s").build())
			.satisfies((ex) -> assertThat(ex.getAttribute()).isEqualTo("capacity"));
		assertThatExceptionOfType(PolicyValidationException.class)
			.isThrownBy(() -> RateLimitPolicy.builder("p").capacity(1).build())
			.satisfies((ex) -> assertThat(ex.getAttribute()).isEqualTo("refill"));
	}

	@Test
	void namesThatCannotAppearInKeysOrHeadersAreRejected() {
		for (String bad : new String[] { "", "a b", "a\"b", "{x}", "-lead", "x".repeat(65) }) {
			assertThatExceptionOfType(PolicyValidationException.class).isThrownBy(() -> RateLimitPolicy.builder(bad));
		}
	}

	@Test
	void bucketsTooLargeForExactArithmeticAreRejected() {
		assertThatExceptionOfType(PolicyValidationException.class)
			.isThrownBy(() -> RateLimitPolicy.builder("p").capacity(1_000_000_000).refill("1/1d").build())
			.withMessageContaining("2^50");
	}

	@Test
	void prefetchNeedsATokenBucketOrFixedWindowAtMostTheCapacityAndNoWaitMode() {
		assertThatExceptionOfType(PolicyValidationException.class)
			.isThrownBy(() -> RateLimitPolicy.builder("p")
				.algorithm(Algorithm.SLIDING_WINDOW_LOG)
				.capacity(100)
				.window("1s")
				.prefetch(10)
				.build())
			.withMessageContaining("prefetch '10'")
			.withMessageContaining("token-bucket or fixed-window");
		assertThatExceptionOfType(PolicyValidationException.class)
			.isThrownBy(() -> RateLimitPolicy.builder("p").capacity(100).refill("100/1s").prefetch(101).build())
			.withMessageContaining("must not exceed the capacity (100)");
		assertThatExceptionOfType(PolicyValidationException.class)
			.isThrownBy(() -> RateLimitPolicy.builder("p").capacity(100).refill("100/1s").maxWaitMicros(1).prefetch(5).build())
			.withMessageContaining("max-wait");
		assertThatExceptionOfType(PolicyValidationException.class)
			.isThrownBy(() -> RateLimitPolicy.builder("p").prefetch(-1))
			.satisfies((ex) -> assertThat(ex.getAttribute()).isEqualTo("prefetch"));
	}

	@Test
	void prefetchIsKeptByCopiesAndDroppedByTheLocalShare() {
		RateLimitPolicy policy = RateLimitPolicy.builder("p")
			.capacity(100)
			.refill("100/1s")
			.prefetch(10)
			.localInstances(4)
			.build();
		assertThat(policy.toBuilder("p").build()).isEqualTo(policy);
		assertThat(policy.toString()).contains("prefetch=10");
		assertThat(policy.localShare().prefetch()).isZero();
		assertThat(policy.localShare().capacity()).isEqualTo(25);
	}

	@Test
	void windowIsTheTimeAnEmptyBucketTakesToFill() {
		RateLimitPolicy policy = RateLimitPolicy.builder("p").capacity(5).refill("1/1s").build();
		assertThat(policy.windowMicros()).isEqualTo(5_000_000);
		assertThat(policy.key()).isEqualTo("global");
		assertThat(policy.failureMode()).isEqualTo(FailureMode.LOCAL);
	}

}
