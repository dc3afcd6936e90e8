package dev.ratelimit.memory;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * Tells BlockHound which waits of the in-memory stores are not blocking in its
 * sense, so that an application testing its event loops with BlockHound sees
 * the limiter's real blocking calls only. Found by {@code ServiceLoader} when
 * BlockHound is installed; never loaded otherwise.
 * <p>
 * A key's lock is held for a decision's arithmetic only (tens of
 * nanoseconds), so a decision that meets it held spins, yields, and only when
 * the holder has been descheduled parks for 20 µs at a time (see
 * {@code KeyedStates.Entry}); a new key of a policy that has just overflowed
 * waits, the same way, for the adds already under way. Neither waits on I/O
 * or on another request's work, and both are as short as a contended monitor,
 * which BlockHound does not count either. A memory decision may therefore run
 * on an event loop, as the reactive web support does; a decision that waits
 * on Redis, or for its turn in wait mode, still never does.
 * <p>
 * The locks that tell of a store's outages and of Redis failovers, and the one
 * that schedules permit renewals, are taken on Lettuce's event loops too.
 * They were monitors, which BlockHound does not count; they are
 * {@code ReentrantLock}s now so that a virtual thread holding one does not pin
 * its carrier on JDK 21 to 23, and each is held for a state change and a log
 * line (or for scheduling a task), as briefly as the monitor was.
 */
public final class RateLimitBlockHoundIntegration implements BlockHoundIntegration {

	@Override
	public void applyTo(BlockHound.Builder builder) {
		builder.allowBlockingCallsInside("dev.ratelimit.core.KeyedStates$Entry", "lockContended");
		builder.allowBlockingCallsInside("dev.ratelimit.core.OverflowSlots", "awaitUnguarded");
		builder.allowBlockingCallsInside("dev.ratelimit.core.StoreHealth", "failed");
		builder.allowBlockingCallsInside("dev.ratelimit.core.StoreHealth", "recovered");
		builder.allowBlockingCallsInside("dev.ratelimit.concurrency.DistributedConcurrencyLimiter",
				"scheduleRenewals");
		for (String method : new String[] { "switched", "begin", "end", "lostFoundByCall", "beginLoss" }) {
			builder.allowBlockingCallsInside("dev.ratelimit.redis.RedisFailovers", method);
		}
	}

}
