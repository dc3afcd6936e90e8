package dev.ratelimit.concurrency;

import java.time.Duration;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.KeyBound;
import dev.ratelimit.core.KeyedStates;
import dev.ratelimit.core.TimeSource;

/**
 * Caps calls in flight in this instance with resilience4j's semaphore
 * bulkhead, one per policy and key. Waiting callers block on the semaphore for
 * at most the policy's max-wait: no queue beyond the waiting threads
 * themselves.
 * <p>
 * The bulkheads are {@link KeyedStates}, bounded as every in-memory store is
 * (see {@link KeyBound}): a key's bulkhead is dropped only when no call holds or
 * waits for one of its permits, when a fresh bulkhead would be the same; such
 * keys are swept by the first new key at least a second of the clock after the
 * previous sweep. A bulkhead with calls in flight is never dropped, since a
 * fresh one would admit its key's permits a second time. When a policy holds
 * its bound of keys with calls in flight, a new key takes its permits from one
 * of the policy's overflow slots, a bulkhead with the policy's permits shared
 * by the new keys that land on it: such a key may be refused early, never
 * granted more than the permits, whatever the failure mode. A permit goes back
 * to the bulkhead it was taken from.
 */
public final class LocalConcurrencyLimiter implements ConcurrencyLimiter {

	private final TimeSource time;

	private final KeyedStates<ConcurrencyPolicy, Cap> caps;

	/**
	 * Creates a limiter on the system clock.
	 * @param maxKeys the most keys kept per policy
	 */
	public LocalConcurrencyLimiter(long maxKeys) {
		this(new KeyBound(maxKeys), TimeSource.system());
	}

	/**
	 * Creates a limiter.
	 * @param bound the most keys kept per policy, its overflow slots, and the
	 * count of drops and overflow decisions
	 * @param time the clock that spaces the sweeps
	 */
	public LocalConcurrencyLimiter(KeyBound bound, TimeSource time) {
		this.time = time;
		this.caps = new KeyedStates<>(Cap::new, bound, time.currentTimeMicros());
	}

	@Override
	public Permit acquire(ConcurrencyPolicy policy, @Nullable String key) {
		Cap cap = join(policy, id(policy, key));
		boolean permitted = false;
		try {
			// Outside the key's lock: a caller may wait here for up to the policy's max-wait.
			Bulkhead bulkhead = cap.bulkhead;
			permitted = bulkhead.tryAcquirePermission();
			if (permitted && inUse(bulkhead) > policy.permits()) {
				// The key's bulkhead is larger than this call's permits (another plan, or an override that
				// lowered them): the calls in flight, this one counted, must fit this call's permits.
				bulkhead.onComplete();
				permitted = false;
			}
		}
		finally {
			if (!permitted) {
				leave(cap);
			}
		}
		if (!permitted) {
			throw new ConcurrencyLimitExceededException(policy, 0);
		}
		// The permit keeps the bulkhead it was taken from: its key may have an entry of its own by the
		// time it is released, or the slot may be another key's too.
		return new OncePermit() {

			@Override
			protected void released(Ending ending) {
				cap.bulkhead.onComplete();
				leave(cap);
			}

		};
	}

	/**
	 * Returns the calls in flight for a key: on its own bulkhead, or on its
	 * overflow slot's, which counts the calls of the other keys sharing it too.
	 * @param policy the policy
	 * @param key the key
	 * @return the number of permits in use
	 */
	public int inUse(ConcurrencyPolicy policy, String key) {
		Cap cap = this.caps.lockToRead(policy, id(policy, key));
		if (cap == null) {
			return 0;
		}
		try {
			return inUse(cap.bulkhead);
		}
		finally {
			cap.unlock();
		}
	}

	/**
	 * Returns the keys held, after dropping those without calls in flight.
	 * @return the number of keys
	 */
	public long size() {
		return this.caps.size(this.time.currentTimeMicros());
	}

	private static int inUse(Bulkhead bulkhead) {
		return bulkhead.getBulkheadConfig().getMaxConcurrentCalls()
				- bulkhead.getMetrics().getAvailableConcurrentCalls();
	}

	private static String id(ConcurrencyPolicy policy, @Nullable String key) {
		return policy.name() + '\u0000' + ((key != null) ? key : "");
	}

	/**
	 * Returns the bulkhead a key is decided on with this caller counted among
	 * its users, so that no sweep drops it while the caller waits for or holds a
	 * permit.
	 */
	private Cap join(ConcurrencyPolicy policy, String id) {
		Cap cap = this.caps.lock(policy, id, this.time.currentTimeMicros());
		try {
			cap.users++;
			cap.fit(policy);
			cap.freshAt(Long.MAX_VALUE);
			return cap;
		}
		finally {
			cap.unlock();
		}
	}

	/**
	 * Counts a caller out of a bulkhead's users; a key's is fresh again, and may
	 * be dropped, once none is left.
	 */
	private static void leave(Cap cap) {
		cap.lock();
		try {
			if (--cap.users == 0) {
				cap.freshAt(Long.MIN_VALUE);
			}
		}
		finally {
			cap.unlock();
		}
	}

	/**
	 * One key's bulkhead (or an overflow slot's) and the number of callers using
	 * it: those waiting for a permit and those holding one. Users are counted
	 * under the entry's own lock.
	 */
	static final class Cap extends KeyedStates.Entry {

		final Bulkhead bulkhead;

		int users;

		Cap(ConcurrencyPolicy policy, long nowMicros) {
			this.bulkhead = Bulkhead.of(policy.name(), config(policy));
		}

		/**
		 * Grows the bulkhead when a call's policy allows more permits than it has
		 * (a larger plan, a raised override). It never shrinks: shrinking a
		 * bulkhead blocks until enough calls end, so a smaller policy is enforced
		 * by counting the calls in flight instead. Called under the key's lock.
		 */
		void fit(ConcurrencyPolicy policy) {
			BulkheadConfig current = this.bulkhead.getBulkheadConfig();
			if (policy.permits() > current.getMaxConcurrentCalls()
					|| policy.maxWaitMicros() * 1_000L != current.getMaxWaitDuration().toNanos()) {
				this.bulkhead.changeConfig(config(policy, Math.max(policy.permits(), current.getMaxConcurrentCalls())));
			}
		}

		private static BulkheadConfig config(ConcurrencyPolicy policy) {
			return config(policy, policy.permits());
		}

		private static BulkheadConfig config(ConcurrencyPolicy policy, int permits) {
			return BulkheadConfig.custom()
				.maxConcurrentCalls(permits)
				.maxWaitDuration(Duration.ofNanos(policy.maxWaitMicros() * 1_000L))
				.fairCallHandlingStrategyEnabled(true)
				.build();
		}

	}

	/** @return whether the cap waits for a permit: its bulkheads are in this process's memory */
	@Override
	public boolean mayBlock(ConcurrencyPolicy policy) {
		return policy.maxWaitMicros() > 0;
	}

}
