package dev.ratelimit.outcome;

import java.util.List;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Acquisition;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.LimitRequest;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitOutcome;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.Sleeper;
import dev.ratelimit.core.Take;
import dev.ratelimit.memory.InMemoryRateLimitBackend;
import dev.ratelimit.metrics.MicrometerLimitListener;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A give-back the store refuses (as a silent Redis does) leaves the unit
 * counted, never thrown at the caller, and shows in
 * {@code rate.limit.give.backs}.
 */
class GiveBackFailureTests {

	private final ManualTimeSource clock = new ManualTimeSource();

	private final GiveBacksFailing backend = new GiveBacksFailing(new InMemoryRateLimitBackend(this.clock, 1_000));

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final RateLimiter limiter = new RateLimiter(this.backend, new LimitKeys("rl", 128), Sleeper.system(),
			null, new MicrometerLimitListener(() -> this.meters));

	private final RateLimitPolicy policy = RateLimitPolicy.builder("failed-logins")
		.algorithm(dev.ratelimit.core.Algorithm.FIXED_WINDOW)
		.capacity(2)
		.window("15m")
		.build();

	@Test
	void failedGiveBackLeavesTheUnitCountedAndIsMetered() {
		RateLimitOutcome first = take();
		this.backend.failing = true;
		first.provisional().settle((name) -> false);
		this.backend.failing = false;
		assertThat(give("failed")).isEqualTo(1);
		// Still counted: one unit left, not two.
		take().provisional().settle((name) -> true);
		assertThat(take().allowed()).isFalse();
	}

	@Test
	void givenBackUnitIsMeteredAndFreed() {
		take().provisional().settle((name) -> false);
		assertThat(give("given")).isEqualTo(1);
		take();
		take();
		assertThat(take().allowed()).isFalse();
	}

	@Test
	void settlingTwiceGivesBackOnce() {
		RateLimitOutcome outcome = take();
		outcome.provisional().settle((name) -> false);
		outcome.provisional().settle((name) -> false);
		assertThat(give("given")).isEqualTo(1);
	}

	private RateLimitOutcome take() {
		return this.limiter.acquire(List.of(new LimitRequest(this.policy, "alice", 1, true)));
	}

	private double give(String outcome) {
		var counter = this.meters.find(MicrometerLimitListener.GIVE_BACKS).tag("outcome", outcome).counter();
		return (counter != null) ? counter.count() : 0;
	}

	/** An in-memory backend whose give-backs fail while told to, as a store that cannot be reached. */
	private static final class GiveBacksFailing implements RateLimitBackend {

		private final RateLimitBackend delegate;

		volatile boolean failing;

		GiveBacksFailing(RateLimitBackend delegate) {
			this.delegate = delegate;
		}

		@Override
		public List<Decision> tryConsumeAll(List<Acquisition> acquisitions) {
			return this.delegate.tryConsumeAll(acquisitions);
		}

		@Override
		public List<Take> tryTakeAll(List<Acquisition> acquisitions) {
			return this.delegate.tryTakeAll(acquisitions);
		}

		@Override
		public void giveBack(RateLimitPolicy policy, String key, long cost, String receipt) {
			if (this.failing) {
				throw new IllegalStateException("store unavailable");
			}
			this.delegate.giveBack(policy, key, cost, receipt);
		}

	}

}
