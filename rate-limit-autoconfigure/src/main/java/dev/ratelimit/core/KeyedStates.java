package dev.ratelimit.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * The keyed state of an in-memory store: one state per key, each guarded by its
 * own lock, bounded by a {@link KeyBound}. The three in-memory stores (rate
 * limits, budgets, concurrency caps) keep their state here and differ only in
 * the decisions they take on it; the map, the locking, the sweep of idle keys
 * and the bound are written once, here.
 * <p>
 * A key's state is an {@link Entry}: the store's state class extends it, so
 * that the lock, the freshness and the fields a decision reads and writes are
 * one object of a few dozen bytes. Two threads deciding on one hot key then pass
 * one or two cache lines between their cores per decision (one when the object
 * does not straddle a line boundary), where a lock and a state kept apart took
 * two or three.
 * <p>
 * The rule of the bound: a key is dropped only once forgetting it changes
 * nothing, that is once the clock has reached the time its store last said its
 * state is fresh again ({@link Entry#freshAt}); a key that still matters is
 * never dropped to make room. When a policy holds its bound of such keys, a new
 * key is refused with {@link TooManyKeysException} and the caller applies the
 * policy's failure mode.
 * <p>
 * Keys live in a {@link ConcurrentHashMap}, so locking a known key costs one map
 * read and one compare-and-set, and allocates nothing. Idle keys are swept in
 * bulk by the first insert at least {@link #SWEEP_INTERVAL_MICROS} of the clock
 * after the previous sweep, and by {@link #size()}, never while a caller holds a
 * key's lock. Without inserts the map cannot grow, so idle keys may stay until
 * the next one; a sweep reads every key once. A policy at its bound therefore
 * admits new keys again at the first sweep after some of its keys have gone
 * idle: within a second of the clock.
 * <p>
 * A key is only removed under its lock, after marking it dead: a caller that
 * looked it up just before finds it dead once it holds the lock and looks again,
 * so no decision is ever taken on state the map no longer holds.
 *
 * @param <P> the kind of limit, whose name a key is counted under and from
 * which a new key's state is created
 * @param <E> the state type, an entry
 */
public final class KeyedStates<P extends Limit, E extends KeyedStates.Entry> {

	/** Least time between two sweeps for idle keys. */
	public static final long SWEEP_INTERVAL_MICROS = 1_000_000L;

	/** Attempts that back off by spinning, each up to twice as long as the one before. */
	private static final int SPINS = 100;

	/** The longest spin between two attempts, in {@link Thread#onSpinWait()} calls. */
	private static final int MAX_BACKOFF = 64;

	private static final int YIELDS = 20;

	private static final long PARK_NANOS = 20_000L;

	private final Creator<P, E> creator;

	private final KeyBound bound;

	private final ConcurrentHashMap<String, E> entries = new ConcurrentHashMap<>();

	/** Drops idle keys, once a second of the clock at most. */
	private final IdleSweeper sweeper;

	/**
	 * Creates an empty keyed state.
	 * @param creator creates the state of a key not held
	 * @param bound the most keys kept per policy, and the count of drops and refusals
	 * @param nowMicros the current time of the store's clock
	 */
	public KeyedStates(Creator<P, E> creator, KeyBound bound, long nowMicros) {
		this.creator = creator;
		this.bound = bound;
		this.sweeper = new IdleSweeper(SWEEP_INTERVAL_MICROS, nowMicros, this::sweep);
	}

	/**
	 * Returns the live state of a key with its lock held, creating it within the
	 * policy's bound if absent. The caller unlocks it.
	 * @param policy the policy, which a new key's state is created from
	 * @param key the key
	 * @param nowMicros the current time
	 * @return the state, locked
	 * @throws TooManyKeysException if the key is new and the policy holds its bound
	 * of keys that still matter
	 */
	public E lock(P policy, String key, long nowMicros) {
		return lock(policy, key, nowMicros, false);
	}

	/**
	 * Returns the live state of a key with its lock held, creating it even at the
	 * policy's bound: for state that must be kept whatever the bound, such as the
	 * spend of a settle whose reservation outlived its key. Such keys must be few
	 * (bounded by the calls in flight).
	 * @param policy the policy, which a new key's state is created from
	 * @param key the key
	 * @param nowMicros the current time
	 * @return the state, locked
	 */
	public E lockEvenAtBound(P policy, String key, long nowMicros) {
		return lock(policy, key, nowMicros, true);
	}

	private E lock(P policy, String key, long nowMicros, boolean evenAtBound) {
		E entry = this.entries.get(key);
		while (true) {
			if (entry == null) {
				entry = create(policy, key, nowMicros, evenAtBound);
			}
			entry.lock();
			if (entry.live) {
				return entry;
			}
			// Removed between the look-up and the lock: look again.
			entry.unlock();
			entry = this.entries.get(key);
		}
	}

	/**
	 * Returns the live state of a key with its lock held, or {@code null} if the
	 * key is not held: for operations that read a state or give something back,
	 * and so have nothing to keep for a key already forgotten.
	 * @param key the key
	 * @return the state, locked, or {@code null}
	 */
	public E lockIfPresent(String key) {
		E entry = this.entries.get(key);
		while (entry != null) {
			entry.lock();
			if (entry.live) {
				return entry;
			}
			entry.unlock();
			entry = this.entries.get(key);
		}
		return null;
	}

	/**
	 * Returns the state of a key without locking it, creating it within the bound
	 * if absent: for callers that lock several keys in an order of their own.
	 * Such a caller must check {@link Entry#isLive()} once it holds the lock, and
	 * look again if it is not.
	 * @param policy the policy, which a new key's state is created from
	 * @param key the key
	 * @param nowMicros the current time
	 * @return the state, not locked
	 * @throws TooManyKeysException if the key is new and the policy holds its bound
	 * of keys that still matter
	 */
	public E entry(P policy, String key, long nowMicros) {
		E entry = this.entries.get(key);
		return (entry != null) ? entry : create(policy, key, nowMicros, false);
	}

	/**
	 * Forgets a key, as an operator's reset does: a caller holding its entry
	 * finishes on it; the next one starts afresh.
	 * @param key the key
	 */
	public void remove(String key) {
		E entry = this.entries.get(key);
		if (entry != null) {
			entry.lock();
			try {
				if (entry.live) {
					entry.live = false;
					this.entries.remove(entry.key, entry);
					entry.owner.removed();
				}
			}
			finally {
				entry.unlock();
			}
		}
	}

	/**
	 * Returns the number of keys held, after dropping idle ones (an estimate
	 * while other threads run).
	 * @param nowMicros the current time
	 * @return the number of keys
	 */
	public long size(long nowMicros) {
		this.sweeper.sweepNow(nowMicros);
		return this.entries.mappingCount();
	}

	/**
	 * Adds the entry of a key (unless another thread just did), within the
	 * policy's bound unless told otherwise.
	 */
	private E create(P policy, String key, long nowMicros, boolean evenAtBound) {
		this.sweeper.sweepIfDue(nowMicros);
		KeyBound.Keys keys = this.bound.of(policy.name());
		if (evenAtBound) {
			keys.add();
		}
		else if (!keys.tryAdd()) {
			// Every key held still matters: forgetting one would hand its caller a fresh quota.
			throw keys.refuse();
		}
		E created = this.creator.create(policy, nowMicros);
		// Set before the map publishes the entry, and never again.
		created.key = key;
		created.owner = keys;
		E entry = this.entries.putIfAbsent(key, created);
		if (entry != null) {
			keys.removed();
			return entry;
		}
		return created;
	}

	/**
	 * Drops every key whose state is fresh again. Called by the sweeper, one
	 * thread at a time.
	 */
	private void sweep(long nowMicros) {
		for (E entry : this.entries.values()) {
			// A racy first look, checked again under the entry's lock.
			if (entry.freshBy(nowMicros)) {
				entry.lock();
				try {
					if (entry.live && entry.freshBy(nowMicros)) {
						entry.live = false;
						this.entries.remove(entry.key, entry);
						entry.owner.dropped();
					}
				}
				finally {
					entry.unlock();
				}
			}
		}
	}

	/**
	 * Creates the state of a key not held: the state a forgotten key starts from.
	 *
	 * @param <P> the kind of limit
	 * @param <E> the state type
	 */
	@FunctionalInterface
	public interface Creator<P, E> {

		/**
		 * Creates a fresh state, not yet in any map.
		 * @param policy the policy
		 * @param nowMicros the current time
		 * @return the state
		 */
		E create(P policy, long nowMicros);

	}

	/**
	 * One key's lock, liveness and freshness: the part of a key's state that
	 * {@link KeyedStates} keeps, extended by each store's state class with the
	 * fields its decisions read and write under the lock.
	 * <p>
	 * The lock is a flag taken by compare-and-set and released by a plain
	 * release store: half the atomic instructions of a monitor, and it can be
	 * taken in one method and released in another. Locks are held for a
	 * decision's arithmetic only (tens of nanoseconds), so a waiter spins, then
	 * yields, then sleeps briefly; there is no queue to wake. A spinning waiter
	 * backs off between attempts without reading the lock, so that the holder
	 * keeps the cache line it writes. The lock is not reentrant.
	 */
	public abstract static class Entry {

		private static final VarHandle LOCKED;

		static {
			try {
				LOCKED = MethodHandles.lookup().findVarHandle(Entry.class, "locked", int.class);
			}
			catch (ReflectiveOperationException ex) {
				throw new ExceptionInInitializerError(ex);
			}
		}

		/** 1 while held; read and written through {@link #LOCKED} only. */
		@SuppressWarnings("unused")
		private volatile int locked;

		/** From when forgetting the state changes nothing; written under the lock. */
		private long freshAtMicros = Long.MIN_VALUE;

		// The three fields below are KeyedStates' own; package-private only because it reaches them
		// through its type variable, which private access does not allow.

		/** Cleared, under the lock, when the entry leaves the map. */
		boolean live = true;

		/** Set by {@link KeyedStates#create} before the entry is published; {@code null} outside a map. */
		String key;

		/** The policy's key count, given back when the entry leaves the map; set with {@link #key}. */
		KeyBound.Keys owner;

		/**
		 * Creates the state of a key, not yet in a map (or one that never will be,
		 * such as the fresh state an unknown key is read as).
		 */
		protected Entry() {
		}

		/**
		 * Returns the key, {@code null} for a state not held by a map.
		 * @return the key
		 */
		public String key() {
			return this.key;
		}

		/**
		 * Says from when forgetting the state changes nothing; call with the lock
		 * held, after each change. A state is kept until then, and is dropped at a
		 * sweep after it. Until first said, a state is fresh.
		 * @param micros the time, {@link Long#MAX_VALUE} to keep it until said otherwise
		 */
		public void freshAt(long micros) {
			this.freshAtMicros = micros;
		}

		/**
		 * Keeps the state fresh no earlier than a time: for a state that is fresh
		 * again a fixed time after its last use, where threads that read the clock
		 * before taking the lock may bring an earlier time than a previous holder.
		 * Call with the lock held.
		 * @param micros the earliest time the state may be fresh again
		 */
		public void freshNoEarlierThan(long micros) {
			if (micros > this.freshAtMicros) {
				this.freshAtMicros = micros;
			}
		}

		/**
		 * Returns whether the entry is still in the map; read with the lock held.
		 * @return whether it is live
		 */
		public boolean isLive() {
			return this.live;
		}

		boolean freshBy(long nowMicros) {
			return nowMicros >= this.freshAtMicros;
		}

		/** Takes the lock, waiting as long as it takes. */
		public void lock() {
			if (!LOCKED.compareAndSet(this, 0, 1)) {
				lockContended();
			}
		}

		private void lockContended() {
			int attempts = 0;
			int backoff = 1;
			do {
				attempts++;
				if (attempts < SPINS) {
					// Spin without reading the lock: each read would take the holder's line away from it.
					for (int i = 0; i < backoff; i++) {
						Thread.onSpinWait();
					}
					backoff = Math.min(backoff << 1, MAX_BACKOFF);
				}
				else if (attempts < SPINS + YIELDS) {
					Thread.yield();
				}
				else {
					// The holder is likely descheduled: stop competing with it for a core.
					LockSupport.parkNanos(PARK_NANOS);
				}
				// Test before test-and-set, so that a waiter writes the line only when the lock is free.
			}
			while ((int) LOCKED.getOpaque(this) != 0 || !LOCKED.compareAndSet(this, 0, 1));
		}

		/** Releases the lock. */
		public void unlock() {
			// A release store suffices: it publishes the state written under the lock.
			LOCKED.setRelease(this, 0);
		}

	}

}
