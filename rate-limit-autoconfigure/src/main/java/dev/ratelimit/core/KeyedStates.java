package dev.ratelimit.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Comparator;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;

/**
 * The keyed state of an in-memory store: one state per key, each guarded by its
 * own lock, bounded by a {@link KeyBound}. The three in-memory stores (rate
 * limits, budgets, concurrency caps) keep their state here and differ only in
 * the decisions they take on it; the map, the locking, the sweep of idle keys,
 * the bound and the overflow slots are written once, here.
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
 * key is decided on one of the policy's overflow slots instead: a fixed array
 * of states per policy (allocated at its first overflow, each state created by
 * the store's {@link Creator} from the policy on first use), indexed by a
 * SipHash of the key under a random key drawn per store, so that nobody can
 * work out offline which keys share a victim's slot. Keys sharing a slot share
 * the policy's limit: they may be refused early, never admitted beyond it.
 * Slots are never swept, so what was spent on them is never forgotten.
 * <p>
 * A key decided on its slot stays there for as long as the slot's state still
 * matters, even once the policy has room again: its own fresh entry would hand
 * it its limit a second time. Each slot remembers which keys used it since it
 * was last fresh (a small Bloom filter, see {@link OverflowSlots}), so a key
 * that never did gets an entry of its own as soon as there is room, and the
 * slots drain once a flood stops. Once a policy has slots, its new keys are only added while their
 * slot's lock is held, and a caller holding a slot checks that its key has no
 * entry of its own ({@link #isCurrent}), so a key is never decided on both.
 * Operations that go back to a state later (a cap's release, a budget's settle,
 * a give-back) go to the state they were taken on, which the store remembers.
 * Reads of a key not held ({@link #lockToRead}) read its slot, if it has one:
 * what the key's next decision would see, which may include other keys' use but
 * never less than what limits it.
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

	/**
	 * The order in which a caller locks several entries: keys in key order, then
	 * slots by policy and index. A total order, so that callers locking several
	 * entries never wait for each other in a cycle.
	 */
	public static final Comparator<Entry> LOCK_ORDER = KeyedStates::compareForLocking;

	/** Attempts that back off by spinning, each up to twice as long as the one before. */
	private static final int SPINS = 100;

	/** The longest spin between two attempts, in {@link Thread#onSpinWait()} calls. */
	private static final int MAX_BACKOFF = 64;

	private static final int YIELDS = 20;

	private static final long PARK_NANOS = 20_000L;

	private final Creator<P, E> creator;

	private final KeyBound bound;

	private final ConcurrentHashMap<String, E> entries = new ConcurrentHashMap<>();

	/** Each policy's key count and, once it has overflowed, its slots. */
	private final ConcurrentHashMap<String, OverflowSlots<E>> policies = new ConcurrentHashMap<>();

	/** Places keys on slots; its key is this store's secret. */
	private final SeededHash slotHash = SeededHash.random();

	/** Drops idle keys, once a second of the clock at most. */
	private final IdleSweeper sweeper;

	/**
	 * Creates an empty keyed state.
	 * @param creator creates the state of a key not held, and of an overflow slot
	 * @param bound the most keys kept per policy, the overflow slots per policy,
	 * and the count of drops and overflow decisions
	 * @param nowMicros the current time of the store's clock
	 */
	public KeyedStates(Creator<P, E> creator, KeyBound bound, long nowMicros) {
		this.creator = creator;
		this.bound = bound;
		this.sweeper = new IdleSweeper(SWEEP_INTERVAL_MICROS, nowMicros, this::sweep);
	}

	/**
	 * Returns the state a key is decided on with its lock held: its own, created
	 * within the policy's bound if absent, or else its overflow slot. The caller
	 * unlocks it.
	 * @param policy the policy, which a new key's state is created from
	 * @param key the key
	 * @param nowMicros the current time
	 * @return the state, locked
	 */
	public E lock(P policy, String key, long nowMicros) {
		E entry = this.entries.get(key);
		while (true) {
			if (entry == null) {
				entry = create(policy, key, nowMicros);
			}
			entry.lock();
			if (isCurrent(key, entry)) {
				return entry;
			}
			// Removed between the look-up and the lock, or the key got an entry of its own: look again.
			entry.unlock();
			entry = this.entries.get(key);
		}
	}

	/**
	 * Returns whether a state, locked by the caller, is still the one a key is
	 * decided on: for a key's own entry, that it is still in the map; for a slot,
	 * that the key has no entry of its own (which is only ever added under the
	 * slot's lock).
	 * @param key the key
	 * @param entry the state, locked
	 * @return whether to decide on it
	 */
	public boolean isCurrent(String key, E entry) {
		return entry.isOverflow() ? !this.entries.containsKey(key) : entry.live;
	}

	/**
	 * Returns the live state of a key's own entry with its lock held, or
	 * {@code null} if the key has none: for operations that give back to a key's
	 * own state, and so have nothing to do for a key already forgotten.
	 * @param key the key
	 * @return the state, locked, or {@code null}
	 */
	public @Nullable E lockIfPresent(String key) {
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
	 * Returns a key's overflow slot with its lock held, or {@code null} if the
	 * policy has none for it yet: for operations that go back to a slot they
	 * took from. Nothing is created.
	 * @param policy the policy
	 * @param key the key
	 * @return the slot, locked, or {@code null}
	 */
	public @Nullable E lockSlotIfPresent(P policy, String key) {
		OverflowSlots<E> on = this.policies.get(policy.name());
		int count = (on != null) ? on.count() : 0;
		E slot = (on != null && count > 0) ? on.get(slotIndex(this.slotHash.hash(key), count)) : null;
		if (slot != null) {
			slot.lock();
		}
		return slot;
	}

	/**
	 * Returns what a key's next decision would see, locked, without adding
	 * anything: its own entry, else its overflow slot if it has one; {@code null}
	 * when it would start fresh. A slot may show other keys' use too, never less
	 * than what limits the key.
	 * @param policy the policy
	 * @param key the key
	 * @return the state, locked, or {@code null}
	 */
	public @Nullable E lockToRead(P policy, String key) {
		E entry = lockIfPresent(key);
		return (entry != null) ? entry : lockSlotIfPresent(policy, key);
	}

	/**
	 * Returns the state a key is decided on without locking it, creating its
	 * entry within the bound if absent: for callers that lock several keys in
	 * {@link #LOCK_ORDER}. Such a caller must check {@link #isCurrent} once it
	 * holds the lock, and look again if it is not.
	 * @param policy the policy, which a new key's state is created from
	 * @param key the key
	 * @param nowMicros the current time
	 * @return the state, not locked
	 */
	public E entry(P policy, String key, long nowMicros) {
		E entry = this.entries.get(key);
		return (entry != null) ? entry : create(policy, key, nowMicros);
	}

	/**
	 * Forgets a key, as an operator's reset does: a caller holding its entry
	 * finishes on it; the next one starts afresh. Overflow slots are never
	 * forgotten: other keys' spend is on them too.
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
					Objects.requireNonNull(entry.owner, "an entry in the map has its owner").removed();
				}
			}
			finally {
				entry.unlock();
			}
		}
	}

	/**
	 * Returns the number of keys held, after dropping idle ones (an estimate
	 * while other threads run). Overflow slots are not keys.
	 * @param nowMicros the current time
	 * @return the number of keys
	 */
	public long size(long nowMicros) {
		this.sweeper.sweepNow(nowMicros);
		return this.entries.mappingCount();
	}

	/**
	 * Returns the state for a key without one in the map: a new entry within the
	 * policy's bound, or the key's overflow slot.
	 */
	private E create(P policy, String key, long nowMicros) {
		this.sweeper.sweepIfDue(nowMicros);
		OverflowSlots<E> on = overflowSlots(policy.name());
		if (on.beginUnguarded()) {
			// Until the policy first overflows, keys are added without a slot's lock.
			try {
				if (on.keys.tryAdd()) {
					return insert(policy, key, on.keys, nowMicros);
				}
				on.allocate(this.bound.overflowSlots());
			}
			finally {
				on.endUnguarded();
			}
		}
		return guarded(policy, key, on, nowMicros);
	}

	/**
	 * Chooses between a new entry and the key's slot holding the slot's lock, so
	 * that a key is never added while another caller decides for it on its slot.
	 */
	private E guarded(P policy, String key, OverflowSlots<E> on, long nowMicros) {
		on.awaitUnguarded();
		long hash = this.slotHash.hash(key);
		int index = slotIndex(hash, on.count());
		E slot = on.getOrCreate(index, () -> this.creator.create(policy, nowMicros));
		slot.lock();
		try {
			E added = this.entries.get(key);
			if (added != null) {
				// Added by a caller that held this lock before.
				return added;
			}
			if (slot.freshBy(nowMicros)) {
				on.clearUsed(index);
			}
			// A key that may have spent on the slot stays there while the slot's state matters; any other
			// gets an entry of its own as soon as there is room, so the slots drain once a flood stops.
			if (!on.mayHaveUsed(index, hash) && on.keys.tryAdd()) {
				return insert(policy, key, on.keys, nowMicros);
			}
			on.markUsed(index, hash);
		}
		finally {
			slot.unlock();
		}
		on.keys.overflowed(policy);
		return slot;
	}

	/** Adds the entry of a key within the bound (unless another caller just did, giving the room back). */
	private E insert(P policy, String key, KeyBound.Keys keys, long nowMicros) {
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

	private static int slotIndex(long hash, int slots) {
		return (int) Long.remainderUnsigned(hash, slots);
	}

	private OverflowSlots<E> overflowSlots(String policy) {
		OverflowSlots<E> on = this.policies.get(policy);
		return (on != null) ? on
				: this.policies.computeIfAbsent(policy, (name) -> new OverflowSlots<>(this.bound.of(name)));
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
						Objects.requireNonNull(entry.owner, "an entry in the map has its owner").dropped();
					}
				}
				finally {
					entry.unlock();
				}
			}
		}
	}

	private static int compareForLocking(Entry a, Entry b) {
		if (a.isOverflow() != b.isOverflow()) {
			return a.isOverflow() ? 1 : -1;
		}
		if (!a.isOverflow()) {
			String keyA = Objects.requireNonNull(a.key, "a key's own entry has its key");
			return keyA.compareTo(Objects.requireNonNull(b.key, "a key's own entry has its key"));
		}
		KeyBound.Keys ownerA = Objects.requireNonNull(a.owner, "a slot has its owner");
		int byPolicy = ownerA.policy().compareTo(Objects.requireNonNull(b.owner, "a slot has its owner").policy());
		return (byPolicy != 0) ? byPolicy : Integer.compare(a.slot, b.slot);
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
		 * Creates a fresh state, not yet in any map: a key's, or an overflow slot's.
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

		// The four fields below are KeyedStates' own; package-private only because it reaches them
		// through its type variable, which private access does not allow.

		/** Cleared, under the lock, when the entry leaves the map. */
		boolean live = true;

		/** Set by {@link KeyedStates#insert} before the entry is published; {@code null} outside the map. */
		@Nullable String key;

		/** The policy's key count, given back when the entry leaves the map; set with {@link #key} or {@link #slot}. */
		KeyBound.@Nullable Keys owner;

		/** The index of an overflow slot among its policy's, -1 for a key's own entry. */
		int slot = -1;

		/**
		 * Creates the state of a key, not yet in a map (or one that never will be,
		 * such as the fresh state an unknown key is read as).
		 */
		protected Entry() {
		}

		/**
		 * Returns the key, {@code null} for a state held by no map: an overflow
		 * slot, or the fresh state an unknown key is read as.
		 * @return the key
		 */
		public @Nullable String key() {
			return this.key;
		}

		/**
		 * Returns whether this is an overflow slot: a state new keys of a policy
		 * at its bound share, never dropped.
		 * @return whether it is a slot
		 */
		public boolean isOverflow() {
			return this.slot >= 0;
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
		 * Returns whether the entry is still in the map, always for an overflow
		 * slot; read with the lock held.
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
