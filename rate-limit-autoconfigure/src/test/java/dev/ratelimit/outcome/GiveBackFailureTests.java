package dev.ratelimit.outcome;

import java.util.List;

import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.LimitRequest;
import dev.ratelimit.core.RateLimitOutcome;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.Sleeper;
import dev.ratelimit.memory.InMemoryRateLimitBackend;
import dev.ratelimit.metrics.MicrometerLimitListener;
import dev.ratelimit.resilience.CircuitBreakingBackend;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A give-back the store refuses (here an open circuit breaker, as during an
 * outage) leaves the unit counted, never thrown at the caller, and shows in
 * {@code rate.limit.give.backs}.
 */
class GiveBackFailureTests {

	private final ManualTimeSource clock = new ManualTimeSource();

	private final CircuitBreakingBackend backend = new CircuitBreakingBackend(
			new InMemoryRateLimitBackend(this.clock, 1_000), CircuitBreakerConfig.ofDefaults(), this.clock);

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
		this.backend.getCircuitBreaker().transitionToForcedOpenState();
		first.provisional().settle((name) -> false);
		this.backend.getCircuitBreaker().transitionToClosedState();
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

}
