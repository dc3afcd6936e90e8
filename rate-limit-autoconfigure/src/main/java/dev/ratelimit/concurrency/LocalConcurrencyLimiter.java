package dev.ratelimit.concurrency;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;

import dev.ratelimit.core.FailureModes;
import dev.ratelimit.core.IdleSweeper;
import dev.ratelimit.core.KeyBound;
import dev.ratelimit.core.LimitListener;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.TooManyKeysException;

/**
 * Caps calls in flight in this instance with resilience4j's semaphore
 * bulkhead, one per policy and key. Waiting callers block on the semaphore for
 * at most the policy's max-wait: no queue beyond the waiting threads
 * themselves.
 * <p>
 * The bulkheads are bounded as every in-memory store is (see
 * {@link KeyBound}): a key's bulkhead is dropped only when no call holds or
 * waits for one of its permits, when a fresh bulkhead would be the same; such
 * keys are swept by the first new key at least a second of the clock after the
 * previous sweep. A bulkhead with calls in flight is never dropped, since a
 * fresh one would admit its key's permits a second time. When a policy holds
 * its bound of keys with calls in flight, a new key is refused and the policy's
 * failure mode applies: closed refuses the call, open and local run it without
 * a permit.
 */
public final class LocalConcurrencyLimiter implements ConcurrencyLimiter {

	/** Least time between two sweeps for unused keys. */
	static final long SWEEP_INTERVAL_MICROS = 1_000_000L;

	private static final Permit UNENFORCED = () -> {
	};

	private final KeyBound bound;

	private final LimitListener listener;

	private final TimeSource time;

	private final ConcurrentHashMap<String, Slot> slots = new ConcurrentHashMap<>();

	/** Drops keys without calls in flight, once a second of the clock at most. */
	private final IdleSweeper sweeper;

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
		this.bound = bound;
		this.time = time;
		this.sweeper = new IdleSweeper(SWEEP_INTERVAL_MICROS, time.currentTimeMicros(), this::sweep);
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
			permitted = slot.bulkhead.tryAcquirePermission();
		}
		finally {
			if (!permitted) {
				slot.leave();
			}
		}
		if (!permitted) {
			throw new ConcurrencyLimitExceededException(policy, 0);
		}
		AtomicBoolean released = new AtomicBoolean();
		return () -> {
			if (released.compareAndSet(false, true)) {
				slot.bulkhead.onComplete();
				slot.leave();
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
		Slot slot = this.slots.get(id(policy, key));
		return (slot != null) ? policy.permits() - slot.bulkhead.getMetrics().getAvailableConcurrentCalls() : 0;
	}

	/**
	 * Returns the keys held, after dropping those without calls in flight.
	 * @return the number of keys
	 */
	public long size() {
		this.sweeper.sweepNow(this.time.currentTimeMicros());
		return this.slots.mappingCount();
	}

	private static String id(ConcurrencyPolicy policy, String key) {
		return policy.name() + '\u0000' + ((key != null) ? key : "");
	}

	/**
	 * Returns the slot of a key with this caller counted among its users, so
	 * that no sweep drops it while the caller waits for or holds a permit.
	 */
	private Slot join(ConcurrencyPolicy policy, String id) {
		while (true) {
			Slot slot = this.slots.get(id);
			if (slot == null) {
				slot = create(policy, id);
			}
			if (slot.tryJoin()) {
				return slot;
			}
			// Retired by a sweep between the look-up and the join: make sure it is gone, look again.
			this.slots.remove(id, slot);
		}
	}

	private Slot create(ConcurrencyPolicy policy, String id) {
		this.sweeper.sweepIfDue(this.time.currentTimeMicros());
		KeyBound.Keys keys = this.bound.of(policy.name());
		if (!keys.tryAdd()) {
			throw keys.refuse();
		}
		Slot created = new Slot(Bulkhead.of(policy.name(), BulkheadConfig.custom()
			.maxConcurrentCalls(policy.permits())
			.maxWaitDuration(Duration.ofNanos(policy.maxWaitMicros() * 1_000L))
			.fairCallHandlingStrategyEnabled(true)
			.build()), keys);
		Slot existing = this.slots.putIfAbsent(id, created);
		if (existing != null) {
			keys.removed();
			return existing;
		}
		return created;
	}

	/**
	 * Drops every key no call holds or waits for. Called by the sweeper, one
	 * thread at a time.
	 */
	private void sweep(long now) {
		this.slots.forEach((id, slot) -> {
			if (slot.tryRetire()) {
				this.slots.remove(id, slot);
				slot.owner.dropped();
			}
		});
	}

	/**
	 * One key's bulkhead and the callers using it: those waiting for a permit and
	 * those holding one. A slot retired by a sweep (users -1) takes no one.
	 */
	private static final class Slot {

		final Bulkhead bulkhead;

		final KeyBound.Keys owner;

		private final AtomicInteger users = new AtomicInteger();

		Slot(Bulkhead bulkhead, KeyBound.Keys owner) {
			this.bulkhead = bulkhead;
			this.owner = owner;
		}

		boolean tryJoin() {
			int current;
			do {
				current = this.users.get();
				if (current < 0) {
					return false;
				}
			}
			while (!this.users.compareAndSet(current, current + 1));
			return true;
		}

		void leave() {
			this.users.decrementAndGet();
		}

		boolean tryRetire() {
			return this.users.compareAndSet(0, -1);
		}

	}

}
