package dev.ratelimit.memory;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

import dev.ratelimit.core.Acquisition;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.IdleSweeper;
import dev.ratelimit.core.KeyBound;
import dev.ratelimit.core.LimitState;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.TooManyKeysException;

/**
 * Keeps limiter state in this process: the embedded default, exact for one
 * instance. Each key's state is guarded by its own lock, so callers only
 * contend when they share a key; a layered decision locks its keys in key order,
 * so two such decisions cannot deadlock.
 * <p>
 * Memory is bounded without ever forgetting a limit that still matters (see
 * {@link KeyBound}): a key is dropped only once it has been idle long enough
 * that forgetting it changes nothing (its bucket would be full, its windows
 * over), and each policy keeps at most {@code maxKeys} keys. When a policy holds
 * that many keys that still matter, a new key is refused with
 * {@link TooManyKeysException}, and the {@link dev.ratelimit.core.RateLimiter}
 * applies the policy's failure mode to that call; the keys already held, an
 * exhausted caller's among them, stay exactly as they are. Evicting the least
 * recently used instead would let a flood of fresh keys reset everybody's
 * buckets.
 * <p>
 * Keys live in a {@link ConcurrentHashMap}, so a decision on a known key costs
 * one map read, one clock read and the key's lock, and allocates nothing. Idle
 * keys are swept in bulk by the first insert at least
 * {@link #SWEEP_INTERVAL_MICROS} of the clock after the previous sweep, and by
 * {@link #size()}, never while a key's lock is held. Without inserts the map
 * cannot grow, so idle keys may then stay until the next one; a sweep reads every
 * key once. A policy at its bound therefore admits new keys again at the first
 * sweep after some of its keys have gone idle: within a second of the clock.
 * <p>
 * A key is only removed under its lock, after marking it dead: a caller that
 * looked it up just before finds it dead once it holds the lock and looks
 * again, so no decision is ever taken on state the map no longer holds.
 */
public final class InMemoryRateLimitBackend implements RateLimitBackend {

	/** Least time between two sweeps for idle keys. */
	static final long SWEEP_INTERVAL_MICROS = 1_000_000L;

	private static final int SPINS = 100;

	private static final int YIELDS = 20;

	private static final long PARK_NANOS = 20_000L;

	private static final MethodHandle ACQUIRE;

	static {
		try {
			ACQUIRE = MethodHandles.lookup()
				.findVirtual(InMemoryRateLimitBackend.class, "acquire", MethodType.methodType(Entry.class,
						RateLimitPolicy.class, String.class, long.class));
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private static final Comparator<Entry> BY_KEY = Comparator.comparing((entry) -> entry.key);

	private final TimeSource time;

	private final KeyBound bound;

	private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();

	/** Drops idle keys, once a second of the clock at most. */
	private final IdleSweeper sweeper;

	/**
	 * {@link #acquire}, called through a handle that the JIT cannot see through.
	 * Inlined, the map look-up alone would take {@link #tryConsume} past the
	 * machine code size (C2's {@code InlineSmallCode}, 2500 bytes) up to which
	 * it is still inlined into its caller once compiled; out of line, it stays
	 * under it, so the caller's escape analysis can remove the {@link Decision}:
	 * no allocation per decision, for a few nanoseconds of call. An instance
	 * field on purpose: C2 treats a static final handle as a constant and would
	 * inline through it.
	 */
	private final MethodHandle acquire;

	/**
	 * Creates a backend.
	 * @param time the clock
	 * @param maxKeys the most keys kept per policy
	 */
	public InMemoryRateLimitBackend(TimeSource time, long maxKeys) {
		this(time, new KeyBound(maxKeys));
	}

	/**
	 * Creates a backend.
	 * @param time the clock
	 * @param bound the most keys kept per policy, and the count of drops and refusals
	 */
	public InMemoryRateLimitBackend(TimeSource time, KeyBound bound) {
		this.time = time;
		this.bound = bound;
		this.sweeper = new IdleSweeper(SWEEP_INTERVAL_MICROS, time.currentTimeMicros(), this::sweep);
		this.acquire = ACQUIRE;
	}

	@Override
	public Decision tryConsume(RateLimitPolicy policy, String key, long cost) {
		long now = this.time.currentTimeMicros();
		Entry entry;
		try {
			entry = (Entry) this.acquire.invokeExact(this, policy, key, now);
		}
		catch (Throwable ex) {
			// acquire throws nothing checked: rethrow what it threw, unwrapped.
			throw sneakyThrow(ex);
		}
		try {
			return entry.state.decide(policy, cost, now, true);
		}
		finally {
			entry.unlock();
		}
	}

	/**
	 * Returns the live entry of a key with its lock held, creating it if needed.
	 */
	private Entry acquire(RateLimitPolicy policy, String key, long now) {
		Entry entry = this.entries.get(key);
		while (true) {
			if (entry == null) {
				entry = create(policy, key, now);
			}
			entry.lock();
			if (entry.live) {
				entry.touch(now);
				return entry;
			}
			// Removed between the look-up and the lock: look again.
			entry.unlock();
			entry = this.entries.get(key);
		}
	}

	@Override
	public List<Decision> tryConsumeAll(List<Acquisition> acquisitions) {
		if (acquisitions.size() == 1) {
			Acquisition only = acquisitions.get(0);
			return List.of(tryConsume(only.policy(), only.key(), only.cost()));
		}
		long now = this.time.currentTimeMicros();
		while (true) {
			Entry[] byIndex = new Entry[acquisitions.size()];
			for (int i = 0; i < byIndex.length; i++) {
				Acquisition acquisition = acquisitions.get(i);
				byIndex[i] = entry(acquisition.policy(), acquisition.key(), now);
			}
			Entry[] lockOrder = byIndex.clone();
			Arrays.sort(lockOrder, BY_KEY);
			int locked = 0;
			try {
				boolean allLive = true;
				for (; locked < lockOrder.length; locked++) {
					// The lock is not reentrant: an entry named twice is locked once.
					if (locked == 0 || lockOrder[locked] != lockOrder[locked - 1]) {
						lockOrder[locked].lock();
					}
					allLive &= lockOrder[locked].live;
				}
				if (allLive) {
					return decideLocked(byIndex, acquisitions, now);
				}
				// An entry was removed between the look-up and its lock: look all up again.
			}
			finally {
				for (int i = locked - 1; i >= 0; i--) {
					if (i == 0 || lockOrder[i] != lockOrder[i - 1]) {
						lockOrder[i].unlock();
					}
				}
			}
		}
	}

	/**
	 * Decides all or nothing, with every entry's lock held.
	 */
	private static List<Decision> decideLocked(Entry[] byIndex, List<Acquisition> acquisitions, long now) {
		Decision[] decisions = new Decision[byIndex.length];
		boolean allAllowed = true;
		for (int i = 0; i < decisions.length; i++) {
			Acquisition acquisition = acquisitions.get(i);
			byIndex[i].touch(now);
			decisions[i] = byIndex[i].state.decide(acquisition.policy(), acquisition.cost(), now, false);
			allAllowed &= decisions[i].allowed();
		}
		for (int i = 0; i < decisions.length; i++) {
			Acquisition acquisition = acquisitions.get(i);
			if (allAllowed) {
				decisions[i] = byIndex[i].state.decide(acquisition.policy(), acquisition.cost(), now, true);
			}
			else if (decisions[i].allowed()) {
				// Nothing is taken when another policy denies: report the state as it stays.
				decisions[i] = byIndex[i].state.decide(acquisition.policy(), 0, now, false);
			}
		}
		return List.of(decisions);
	}

	@Override
	public Decision peek(RateLimitPolicy policy, String key) {
		long now = this.time.currentTimeMicros();
		Entry entry = this.entries.get(key);
		if (entry == null) {
			// An unknown key reads as a fresh one, which is what it would start as.
			return LimitState.create(policy, now).decide(policy, 0, now, false);
		}
		entry.lock();
		try {
			return entry.state.decide(policy, 0, now, false);
		}
		finally {
			entry.unlock();
		}
	}

	@Override
	public void reset(RateLimitPolicy policy, String key) {
		Entry entry = this.entries.get(key);
		if (entry != null) {
			// A caller holding the old entry finishes on it; the next one starts afresh.
			remove(entry);
		}
	}

	/**
	 * Returns the entry of a key, creating it (and making room for it) if absent.
	 */
	private Entry entry(RateLimitPolicy policy, String key, long now) {
		Entry entry = this.entries.get(key);
		return (entry != null) ? entry : create(policy, key, now);
	}

	/**
	 * Adds the entry of a key (unless another thread just did), within the
	 * policy's bound.
	 * @throws TooManyKeysException if the policy holds its bound of keys that still matter
	 */
	private Entry create(RateLimitPolicy policy, String key, long now) {
		this.sweeper.sweepIfDue(now);
		KeyBound.Keys keys = this.bound.of(policy.name());
		if (!keys.tryAdd()) {
			// Every key held still matters: forgetting one would hand its caller a fresh quota.
			throw keys.refuse();
		}
		Entry created = new Entry(key, policy, keys, now);
		Entry entry = this.entries.putIfAbsent(key, created);
		if (entry != null) {
			keys.removed();
			return entry;
		}
		return created;
	}

	/**
	 * Drops every key idle long enough that forgetting it changes nothing. Called
	 * by the sweeper, one thread at a time.
	 */
	private void sweep(long now) {
		for (Entry entry : this.entries.values()) {
			// A racy first look, checked again under the entry's lock.
			if (entry.idleAt(now)) {
				entry.lock();
				try {
					if (entry.live && entry.idleAt(now)) {
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
	 * Marks an entry dead and removes it, under its lock so that no caller is
	 * deciding on it meanwhile.
	 */
	private void remove(Entry entry) {
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

	@SuppressWarnings("unchecked")
	private static <E extends Throwable> RuntimeException sneakyThrow(Throwable ex) throws E {
		throw (E) ex;
	}

	/**
	 * Returns the number of keys currently held, after dropping idle ones (an
	 * estimate while other threads run).
	 * @return the number of keys
	 */
	public long size() {
		this.sweeper.sweepNow(this.time.currentTimeMicros());
		return this.entries.mappingCount();
	}

	/**
	 * One key's state, guarded by the entry's own lock.
	 * <p>
	 * The lock is a flag taken by compare-and-set and released by a plain
	 * release store: half the atomic instructions of a monitor, and it can be
	 * taken in one method and released in another, which keeps
	 * {@link #tryConsume} small. Locks are held for a decision's arithmetic only
	 * (tens of nanoseconds), so a waiter spins, then yields, then sleeps briefly;
	 * there is no queue to wake.
	 */
	private static final class Entry {

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

		final String key;

		final LimitState state;

		/** The policy's key count, given back when the entry leaves the map. */
		final KeyBound.Keys owner;

		/** How long after its last use the state equals a fresh one. */
		final long idleMicros;

		/** The latest time the key was used; written under the lock. */
		long lastMicros;

		/** Cleared, under the lock, when the entry leaves the map. */
		boolean live = true;

		Entry(String key, RateLimitPolicy policy, KeyBound.Keys owner, long now) {
			this.key = key;
			this.state = LimitState.create(policy, now);
			this.owner = owner;
			// In wait mode a bucket may be owed up to max-wait beyond empty, which takes that long more to repay.
			this.idleMicros = policy.idleMicros() + policy.maxWaitMicros();
			this.lastMicros = now;
		}

		boolean tryLock() {
			return LOCKED.compareAndSet(this, 0, 1);
		}

		void lock() {
			if (!tryLock()) {
				lockContended();
			}
		}

		private void lockContended() {
			int attempts = 0;
			// Test before test-and-set, so that waiters only read the line the holder writes.
			while ((int) LOCKED.getOpaque(this) != 0 || !LOCKED.compareAndSet(this, 0, 1)) {
				attempts++;
				if (attempts < SPINS) {
					Thread.onSpinWait();
				}
				else if (attempts < SPINS + YIELDS) {
					Thread.yield();
				}
				else {
					// The holder is likely descheduled: stop competing with it for a core.
					LockSupport.parkNanos(PARK_NANOS);
				}
			}
		}

		void unlock() {
			// A release store suffices: it publishes the state written under the lock.
			LOCKED.setRelease(this, 0);
		}

		void touch(long now) {
			// Threads read the clock before taking the lock, so a later holder may bring an earlier time.
			if (now > this.lastMicros) {
				this.lastMicros = now;
			}
		}

		boolean idleAt(long now) {
			return now - this.lastMicros >= this.idleMicros;
		}

	}

}
