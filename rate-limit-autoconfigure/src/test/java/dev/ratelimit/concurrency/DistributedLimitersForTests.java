package dev.ratelimit.concurrency;

import java.util.concurrent.ScheduledExecutorService;

import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.Sleeper;
import dev.ratelimit.core.TimeSource;

/**
 * Distributed concurrency limiters on a given clock and sleeper, for tests in
 * other packages (the Redis ones) that move time by hand instead of waiting.
 * The constructor taking them is package-private so that the public API only
 * offers real time.
 */
public final class DistributedLimitersForTests {

	private DistributedLimitersForTests() {
	}

	/**
	 * Creates a limiter.
	 * @param store where the permits live
	 * @param keys builds storage keys
	 * @param localFallback caps policies with failure mode local while the store
	 * fails, or {@code null} to let them run as if open
	 * @param clock measures how long a caller has waited
	 * @param sleeper waits between attempts
	 * @param renewals runs the renewals, or {@code null} for a daemon thread of
	 * the limiter's own
	 * @return the limiter; the caller closes it
	 */
	public static DistributedConcurrencyLimiter create(PermitStore store, LimitKeys keys,
			LocalConcurrencyLimiter localFallback, TimeSource clock, Sleeper sleeper,
			ScheduledExecutorService renewals) {
		return new DistributedConcurrencyLimiter(store, keys, localFallback, clock, sleeper, renewals);
	}

}
