package dev.ratelimit.core;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.ratelimit.memory.InMemoryRateLimitBackend;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Wait mode: callers over the rate reserve their turn and wait for it within
 * the bound; beyond it they are rejected; the output keeps the policy's rate.
 */
class WaitModeTests {

	private final ManualTimeSource clock = new ManualTimeSource();

	private final RateLimitPolicy provider = RateLimitPolicy.builder("provider").capacity(10).refill("10/1s")
		.maxWaitMicros(2_000_000)
		.build();

	@Test
	void fiftyCallersAtOnceAreServedInTurnAtTheRateAndTheRestRejected() {
		RateLimiter limiter = new RateLimiter(new InMemoryRateLimitBackend(this.clock, 100), new LimitKeys("rl", 128));
		long start = this.clock.currentTimeMicros();
		List<Long> starts = new ArrayList<>();
		int rejected = 0;
		for (int caller = 0; caller < 50; caller++) {
			RateLimitOutcome outcome = limiter.tryAcquire(List.of(new LimitRequest(this.provider, "api", 1)));
			if (outcome.allowed()) {
				starts.add(start + outcome.delayMicros());
			}
			else {
				rejected++;
				assertThat(outcome.retryAfterMicros()).isPositive();
			}
		}
		// the burst of 10 at once, then one every 100 ms for the 2 s bound
		assertThat(starts).hasSize(30);
		assertThat(rejected).isEqualTo(20);
		assertThat(starts.subList(0, 10)).allMatch((t) -> t == start);
		for (int i = 10; i < 30; i++) {
			assertThat(starts.get(i) - start).isEqualTo((i - 9) * 100_000L);
		}
		// output rate after the burst: exactly 10 per second
		assertThat((starts.get(29) - starts.get(10)) / 19).isEqualTo(100_000L);
	}

	@Test
	void acquireWaitsForTheTurnWithTheSleeper() {
		List<Long> slept = new ArrayList<>();
		RateLimiter limiter = new RateLimiter(new InMemoryRateLimitBackend(this.clock, 100), new LimitKeys("rl", 128),
				(micros) -> {
					slept.add(micros);
					this.clock.advanceMicros(micros);
				});
		long start = this.clock.currentTimeMicros();
		List<Long> admitted = new ArrayList<>();
		for (int i = 0; i < 40; i++) {
			if (limiter.acquire(List.of(new LimitRequest(this.provider, "api", 1))).allowed()) {
				admitted.add(this.clock.currentTimeMicros() - start);
			}
		}
		// a single producer that waits its turn is never rejected and runs at the rate
		assertThat(admitted).hasSize(40);
		assertThat(slept).hasSize(30).allMatch((micros) -> micros == 100_000L);
		assertThat(admitted.get(39)).isEqualTo(3_000_000L);
	}

	@Test
	void windowAlgorithmsRefuseWaitMode() {
		org.assertj.core.api.Assertions.assertThatExceptionOfType(PolicyValidationException.class)
			.isThrownBy(() -> RateLimitPolicy.builder("w").algorithm(Algorithm.FIXED_WINDOW).capacity(1).window("1s")
				.maxWaitMicros(1).build())
			.withMessageContaining("wait mode");
	}

}
