package dev.ratelimit.concurrency;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;

import dev.ratelimit.core.FailureModes;
import dev.ratelimit.core.KeyBound;
import dev.ratelimit.core.KeyedStates;
import dev.ratelimit.core.LimitListener;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.TooManyKeysException;

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
 * its bound of keys with calls in flight, a new key is refused and the policy's
 * failure mode applies: closed refuses the call, open and local run it without
 * a permit.
 */
public final class LocalConcurrencyLimiter implements ConcurrencyLimiter {

	private static final Permit UNENFORCED = () -> {
	};

	private final LimitListener listener;

	private final TimeSource time;

	private final KeyedStates<ConcurrencyPolicy, Slot> slots;

	/**
	 * Creates a limiter on the system clock.
	 * @param maxKeys the most keys kept per policy
	 */
	public LocalConcurrencyLimiter(long maxKeys) {
		this(new KeyBound(maxKeys), TimeSource.system(), LimitListener.NONE);
	}

	/**
	 * Creates a limiter.
	 * @param bound the most keys kept per policy, and the count of drops and refusals
	 * @param time the clock that spaces the sweeps
	 * @param listener hears the fallbacks of keys refused at the bound
	 */
	public LocalConcurrencyLimiter(KeyBound bound, TimeSource time, LimitListener listener) {
		this.listener = listener;
		this.time = time;
		this.slots = new KeyedStates<>(Slot::new, bound, time.currentTimeMicros());
	}

	@Override
	public Permit acquire(ConcurrencyPolicy policy, String key) {
		Slot slot;
		try {
			slot = join(policy, id(policy, key));
		}
		catch (TooManyKeysException ex) {
			// Open, and local too: this is the in-memory store there is, and it is full.
			FailureModes.apply(policy, ex, false, this.listener);
			return UNENFORCED;
		}
		boolean permitted = false;
		try {
			// Outside the key's lock: a caller may wait here for up to the policy's max-wait.
			Bulkhead bulkhead = slot.bulkhead;
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
				leave(slot);
			}
		}
		if (!permitted) {
			throw new ConcurrencyLimitExceededException(policy, 0);
		}
		AtomicBoolean released = new AtomicBoolean();
		return () -> {
			if (released.compareAndSet(false, true)) {
				slot.bulkhead.onComplete();
				leave(slot);
			}
		};
	}

	/**
	 * Returns the calls in flight for a key.
	 * @param policy the policy
	 * @param key the key
	 * @return the number of permits in use
	 */
	public int inUse(ConcurrencyPolicy policy, String key) {
		Slot slot = this.slots.lockIfPresent(id(policy, key));
		if (slot == null) {
			return 0;
		}
		try {
			return inUse(slot.bulkhead);
		}
		finally {
			slot.unlock();
		}
	}

	/**
	 * Returns the keys held, after dropping those without calls in flight.
	 * @return the number of keys
	 */
	public long size() {
		return this.slots.size(this.time.currentTimeMicros());
	}

	private static int inUse(Bulkhead bulkhead) {
		return bulkhead.getBulkheadConfig().getMaxConcurrentCalls()
				- bulkhead.getMetrics().getAvailableConcurrentCalls();
	}

	private static String id(ConcurrencyPolicy policy, String key) {
		return policy.name() + '\u0000' + ((key != null) ? key : "");
	}

	/**
	 * Returns the slot of a key with this caller counted among its users, so
	 * that no sweep drops it while the caller waits for or holds a permit.
	 */
	private Slot join(ConcurrencyPolicy policy, String id) {
		Slot slot = this.slots.lock(policy, id, this.time.currentTimeMicros());
		try {
			slot.users++;
			slot.fit(policy);
			slot.freshAt(Long.MAX_VALUE);
			return slot;
		}
		finally {
			slot.unlock();
		}
	}

	/**
	 * Counts a caller out of a key's users; the key is fresh again, and may be
	 * dropped, once none is left.
	 */
	private static void leave(Slot slot) {
		slot.lock();
		try {
			if (--slot.users == 0) {
				slot.freshAt(Long.MIN_VALUE);
			}
		}
		finally {
			slot.unlock();
		}
	}

	/**
	 * One key's bulkhead and the number of callers using it: those waiting for a
	 * permit and those holding one. Users are counted under the key's lock, the
	 * slot's own.
	 */
	static final class Slot extends KeyedStates.Entry {

		final Bulkhead bulkhead;

		int users;

		Slot(ConcurrencyPolicy policy, long nowMicros) {
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

}
