package dev.ratelimit.resilience;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;

import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;

import dev.ratelimit.core.Acquisition;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Take;
import dev.ratelimit.core.TimeSource;

/**
 * Puts a circuit breaker in front of a remote backend, so that during an outage
 * requests stop waiting for timeouts: once enough calls have failed, the
 * breaker opens and calls fail at once (with
 * {@link CallNotPermittedException}), so the policies' failure modes apply
 * without delay. After the configured wait a few trial calls go through; when
 * they succeed the breaker closes and decisions are back on the backend, with
 * no restart.
 * <p>
 * Built on resilience4j's circuit breaker, with its clock driven by the
 * limiter's {@link TimeSource} so that tests move time by hand.
 */
public final class CircuitBreakingBackend implements RateLimitBackend {

	private final RateLimitBackend delegate;

	private final CircuitBreaker breaker;

	/**
	 * Wraps a backend.
	 * @param delegate the backend to protect
	 * @param config the breaker's settings
	 * @param time the clock the breaker measures its open wait with
	 */
	public CircuitBreakingBackend(RateLimitBackend delegate, CircuitBreakerConfig config, TimeSource time) {
		this.delegate = delegate;
		this.breaker = CircuitBreaker.of("rate-limit-backend",
				CircuitBreakerConfig.from(config).clock(new TimeSourceClock(time)).build());
	}

	@Override
	public List<Decision> tryConsumeAll(List<Acquisition> acquisitions) {
		return this.breaker.executeSupplier(() -> this.delegate.tryConsumeAll(acquisitions));
	}

	@Override
	public List<Take> tryTakeAll(List<Acquisition> acquisitions) {
		return this.breaker.executeSupplier(() -> this.delegate.tryTakeAll(acquisitions));
	}

	/**
	 * Gives back through the breaker: while it is open the give-back fails at
	 * once, and the units stay counted, which never exceeds the limit.
	 */
	@Override
	public void giveBack(RateLimitPolicy policy, String key, long cost, String receipt) {
		this.breaker.executeRunnable(() -> this.delegate.giveBack(policy, key, cost, receipt));
	}

	/**
	 * Resets a key on the protected backend directly: an operator's reset is not
	 * traffic, so it neither counts towards nor is refused by the breaker.
	 */
	@Override
	public void reset(RateLimitPolicy policy, String key) {
		this.delegate.reset(policy, key);
	}

	/**
	 * Returns the breaker, for health and metrics.
	 * @return the circuit breaker
	 */
	public CircuitBreaker getCircuitBreaker() {
		return this.breaker;
	}

	/**
	 * A {@link Clock} reading a {@link TimeSource}.
	 */
	private static final class TimeSourceClock extends Clock {

		private final TimeSource time;

		TimeSourceClock(TimeSource time) {
			this.time = time;
		}

		@Override
		public ZoneId getZone() {
			return ZoneOffset.UTC;
		}

		@Override
		public Clock withZone(ZoneId zone) {
			return this;
		}

		@Override
		public Instant instant() {
			long micros = this.time.currentTimeMicros();
			return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
		}

		@Override
		public long millis() {
			return Math.floorDiv(this.time.currentTimeMicros(), 1_000L);
		}

	}

}
