package dev.ratelimit.benchmarks;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiFunction;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.RemovalCause;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.IdleSweeper;
import dev.ratelimit.core.KeyBound;
import dev.ratelimit.core.LimitState;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.TimeSource;

/**
 * The single-key decision of
 * {@link dev.ratelimit.memory.InMemoryRateLimitBackend#tryConsume}, with the
 * keyed state in a Caffeine cache the way
 * {@link dev.ratelimit.budget.InMemoryBudgetStore} keeps budgets: for
 * {@link KeyedStateBenchmark} only, to measure what Caffeine costs against the
 * hand-written map. Not a {@link dev.ratelimit.core.RateLimitBackend}: layered
 * decisions, which lock several keys at once, are left out.
 * <p>
 * Same rules as the hand-written backend: a new key starts as
 * {@link LimitState#create}, each call decides with
 * {@code decide(policy, cost, now, true)}; a key expires once it has been idle
 * for {@code policy.idleMicros() + policy.maxWaitMicros()} since its last use
 * (a variable {@link Expiry}, on a ticker that reads the {@link TimeSource});
 * each policy keeps at most its {@link KeyBound} of keys: room taken with
 * {@code tryAdd()} before a key is inserted, given back with {@code dropped()}
 * when a key expires and {@code removed()} when it leaves otherwise (a reset).
 * At the bound (after one clean-up of expired keys, once a second at most) a
 * new key is refused with an {@link IllegalStateException}: the overflow slots
 * on which the hand-written backend decides such keys are not modelled here,
 * since the benchmark stays far below the bound. Maintenance runs on the calling thread (a same-thread
 * executor). The eviction listener runs inside the map's lock of the key being
 * evicted, before the entry leaves the map, so an expired key's slot is free
 * again before the same key's new state is created in the same {@code compute}.
 * Caffeine removes expired entries from its timer wheel lazily, in buckets of
 * about a second (2<sup>30</sup> ns) for idle times under a second; every
 * access checks an entry's expiry exactly.
 * <p>
 * Two ways to reach a known key's state:
 * <ul>
 * <li>{@link HitPath#COMPUTE}: every decision runs inside
 * {@code asMap().compute}, which holds the key's lock in the map and sees an
 * expired entry as absent (having evicted it, under the same lock). Expiry
 * also evicts under that lock and checks the entry's time again there, and a
 * compute moves that time forward under it, so an entry is evicted only if no
 * compute ran on it for its idle time: no decision runs on a dropped state,
 * and none is lost.</li>
 * <li>{@link HitPath#READ_THEN_LOCK}: {@code getIfPresent} (which extends the
 * expiry on read), then the entry's own lock (the compare-and-set lock of the
 * hand-written backend), and the decision holding it; {@code compute} only to
 * create (or adopt) the entry of a new or just-dropped key, on which the caller
 * then decides the same way. This is the hand-written backend's structure with
 * Caffeine in place of its map and sweep.
 * Reads do not take the map's lock, so Caffeine may find an entry expired (by
 * the time a reader last wrote into it) while a reader that found it live an
 * instant earlier is deciding on it. Two things keep the rule there. The
 * eviction listener takes the entry's lock and marks it dead before the entry
 * leaves the map; a reader decides only on a live entry, holding that lock, and
 * otherwise looks the key up again, and creates it with {@code compute}, which
 * waits for the eviction and then sees the key absent. And the listener, holding the entry's lock, checks
 * again, by the entry's own last use and a fresh clock reading, whether the
 * state equals a fresh one: if it does, the key is dropped
 * ({@code dropped()}); if not (a reader decided on it in that race), the entry
 * is kept aside with its slot, the next {@code compute} of that key adopts it
 * instead of creating a fresh state, and the sweep at the bound drops it once
 * idle. So a state with a decision that still matters is never forgotten. (The
 * race is real: a stress run with a clock jumping around the idle time took
 * that path a few times per few thousand evictions.)</li>
 * </ul>
 */
public final class CaffeineRateLimitBackend {

	/** How a decision reaches a known key's state. */
	public enum HitPath {

		/** Always {@code asMap().compute}, as the budget store does. */
		COMPUTE,

		/** {@code getIfPresent}, then the entry's lock; {@code compute} only to create. */
		READ_THEN_LOCK

	}

	/** Least time between two clean-ups at the bound. */
	private static final long SWEEP_INTERVAL_MICROS = 1_000_000L;

	private static final int SPINS = 100;

	private static final int YIELDS = 20;

	private static final long PARK_NANOS = 20_000L;

	private static final MethodHandle ACQUIRE;

	private static final MethodHandle COMPUTE;

	static {
		try {
			MethodHandles.Lookup lookup = MethodHandles.lookup();
			ACQUIRE = lookup.findVirtual(CaffeineRateLimitBackend.class, "acquire",
					MethodType.methodType(Entry.class, RateLimitPolicy.class, String.class, long.class));
			COMPUTE = lookup.findVirtual(CaffeineRateLimitBackend.class, "compute", MethodType
				.methodType(Decision.class, RateLimitPolicy.class, String.class, long.class, long.class));
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private final TimeSource time;

	private final KeyBound bound;

	private final boolean readFirst;

	private final Cache<String, Entry> entries;

	/** Entries Caffeine expired while a reader was deciding on them: to be adopted, not forgotten. */
	private final Map<String, Entry> orphans = new ConcurrentHashMap<>();

	/** Runs the cache's expiry (and drops idle orphans) at the bound, once a second at most. */
	private final IdleSweeper sweeper;

	/**
	 * {@link #acquire}, called through a handle that the JIT cannot see through,
	 * as {@link dev.ratelimit.memory.InMemoryRateLimitBackend} calls its own:
	 * inlined, {@code getIfPresent} (or the creation by {@code compute}, warm
	 * from creating the keys) takes {@link #tryConsume} past the machine code
	 * size up to which it is still inlined into its caller once compiled (C2's
	 * {@code InlineSmallCode}), and the caller's escape analysis then no longer
	 * removes the {@link Decision} (56 B per decision). The decision is taken in
	 * one place only, after {@code acquire} returns, for the same reason: a
	 * {@link Decision} that may also come back from a call is allocated. Instance
	 * fields on purpose, as there: C2 would inline through a static final handle.
	 */
	private final MethodHandle acquire;

	/** {@link #compute}, out of line for the same reason. */
	private final MethodHandle compute;

	/**
	 * Creates a backend.
	 * @param time the clock
	 * @param maxKeys the most keys kept per policy
	 * @param hitPath how a decision reaches a known key's state
	 */
	public CaffeineRateLimitBackend(TimeSource time, long maxKeys, HitPath hitPath) {
		this(time, new KeyBound(maxKeys), hitPath);
	}

	/**
	 * Creates a backend.
	 * @param time the clock
	 * @param bound the most keys kept per policy, and the count of drops
	 * @param hitPath how a decision reaches a known key's state
	 */
	public CaffeineRateLimitBackend(TimeSource time, KeyBound bound, HitPath hitPath) {
		this.time = time;
		this.bound = bound;
		this.readFirst = hitPath == HitPath.READ_THEN_LOCK;
		this.entries = Caffeine.newBuilder()
			.expireAfter(new SinceLastUse())
			.ticker(() -> time.currentTimeMicros() * 1_000L)
			.executor(Runnable::run)
			.evictionListener(this::evicted)
			.removalListener(CaffeineRateLimitBackend::removed)
			.build();
		this.sweeper = new IdleSweeper(SWEEP_INTERVAL_MICROS, time.currentTimeMicros(), this::sweep);
		this.acquire = ACQUIRE;
		this.compute = COMPUTE;
	}

	/**
	 * Decides whether {@code cost} units may be taken now from a key, and takes them if so.
	 * @param policy the policy
	 * @param key the key
	 * @param cost the units to take
	 * @return the decision
	 * @throws IllegalStateException if the key is new and the policy holds its bound of keys
	 */
	public Decision tryConsume(RateLimitPolicy policy, String key, long cost) {
		long now = this.time.currentTimeMicros();
		if (!this.readFirst) {
			try {
				return (Decision) this.compute.invokeExact(this, policy, key, cost, now);
			}
			catch (Throwable ex) {
				// compute throws nothing checked: rethrow what it threw, unwrapped.
				throw sneakyThrow(ex);
			}
		}
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
	 * Forgets a key; a caller already deciding on it finishes, the next one starts afresh.
	 * @param key the key
	 */
	public void reset(String key) {
		this.entries.asMap().computeIfPresent(key, (k, entry) -> {
			entry.lock();
			entry.live = false;
			entry.unlock();
			// The removal listener gives the slot back.
			return null;
		});
	}

	/**
	 * Returns the number of keys held, after dropping expired ones (an estimate
	 * while other threads run).
	 * @return the number of keys
	 */
	public long size() {
		this.sweeper.sweepNow(this.time.currentTimeMicros());
		return this.entries.estimatedSize() + this.orphans.size();
	}

	/**
	 * With {@link HitPath#READ_THEN_LOCK}: returns the live entry of a key with
	 * its lock held, creating it if needed.
	 */
	private Entry acquire(RateLimitPolicy policy, String key, long now) {
		Entry entry = this.entries.getIfPresent(key);
		while (true) {
			if (entry == null) {
				entry = createEntry(policy, key, now);
			}
			entry.lock();
			if (entry.live) {
				entry.touch(now);
				return entry;
			}
			// Expired between the look-up and the lock: look again (compute creates or adopts its successor).
			entry.unlock();
			entry = this.entries.getIfPresent(key);
		}
	}

	/**
	 * With {@link HitPath#READ_THEN_LOCK}: returns the entry of a key, created
	 * (or adopted) by {@code compute} if absent.
	 * @throws IllegalStateException if the key is new and the policy holds its bound of keys
	 */
	private Entry createEntry(RateLimitPolicy policy, String key, long now) {
		Consume create = new Consume(this, policy, 0, now);
		Entry entry = this.entries.asMap().compute(key, create);
		if (entry == null) {
			// At the bound: drop what has expired (once a second at most), then try once more.
			this.sweeper.sweepIfDue(now);
			entry = this.entries.asMap().compute(key, create);
			if (entry == null) {
				throw atBound(create.keys);
			}
		}
		return entry;
	}

	/** With {@link HitPath#COMPUTE}: decides inside {@code compute}, holding the key's lock in the map. */
	private Decision compute(RateLimitPolicy policy, String key, long cost, long now) {
		Consume consume = new Consume(this, policy, cost, now);
		this.entries.asMap().compute(key, consume);
		if (consume.decision == null) {
			// At the bound: drop what has expired (once a second at most), then try once more.
			this.sweeper.sweepIfDue(now);
			this.entries.asMap().compute(key, consume);
			if (consume.decision == null) {
				throw atBound(consume.keys);
			}
		}
		return consume.decision;
	}

	private IllegalStateException atBound(KeyBound.Keys keys) {
		return new IllegalStateException("Policy '" + keys.policy() + "' holds its bound of "
				+ this.bound.maxKeysPerPolicy() + " keys; this benchmark backend has no overflow slots");
	}

	/**
	 * Creates the entry of an absent key (or adopts the one kept aside for it),
	 * holding the key's lock in the map.
	 * @return the entry, or null if the policy holds its bound of keys
	 */
	private Entry create(Consume consume, String key) {
		if (!this.orphans.isEmpty()) {
			Entry orphan = this.orphans.remove(key);
			if (orphan != null) {
				// It kept its slot.
				orphan.lock();
				orphan.live = true;
				orphan.unlock();
				return orphan;
			}
		}
		KeyBound.Keys keys = this.bound.of(consume.policy.name());
		consume.keys = keys;
		if (!keys.tryAdd()) {
			return null;
		}
		return new Entry(key, consume.policy, keys, consume.now);
	}

	/**
	 * Called by Caffeine when it evicts an entry (here: expires it), holding the
	 * key's lock in the map, before the entry leaves it.
	 */
	private void evicted(String key, Entry entry, RemovalCause cause) {
		if (entry == null) {
			return;
		}
		entry.lock();
		try {
			entry.live = false;
			if (cause != RemovalCause.EXPIRED) {
				entry.owner.removed();
			}
			else if (entry.idleAt(this.time.currentTimeMicros())) {
				entry.owner.dropped();
			}
			else {
				// A reader decided on it after Caffeine found it expired: keep it for the key's next use.
				this.orphans.put(key, entry);
			}
		}
		finally {
			entry.unlock();
		}
	}

	/** Gives back the slot of a key that left for another reason than eviction: a reset. */
	private static void removed(String key, Entry entry, RemovalCause cause) {
		if (entry != null && cause == RemovalCause.EXPLICIT) {
			entry.owner.removed();
		}
	}

	/** Runs the cache's expiry, and drops the entries kept aside once idle. */
	private void sweep(long now) {
		this.entries.cleanUp();
		for (Entry orphan : this.orphans.values()) {
			orphan.lock();
			try {
				if (!orphan.live && orphan.idleAt(now) && this.orphans.remove(orphan.key, orphan)) {
					orphan.owner.dropped();
				}
			}
			finally {
				orphan.unlock();
			}
		}
	}

	@SuppressWarnings("unchecked")
	private static <E extends Throwable> RuntimeException sneakyThrow(Throwable ex) throws E {
		throw (E) ex;
	}

	/**
	 * The function given to {@code compute}, run holding the key's lock in the
	 * map: creates (or adopts) the entry of an absent key and, with
	 * {@link HitPath#COMPUTE}, decides on it. The arguments in, the decision out:
	 * one object per call, rather than a capturing lambda and a holder.
	 */
	private static final class Consume implements BiFunction<String, Entry, Entry> {

		private final CaffeineRateLimitBackend backend;

		private final RateLimitPolicy policy;

		private final long cost;

		private final long now;

		/** The policy's key count, set when the key was new. */
		KeyBound.Keys keys;

		/** Null when the key was new and the policy at its bound. */
		Decision decision;

		Consume(CaffeineRateLimitBackend backend, RateLimitPolicy policy, long cost, long now) {
			this.backend = backend;
			this.policy = policy;
			this.cost = cost;
			this.now = now;
		}

		@Override
		public Entry apply(String key, Entry entry) {
			Entry current = entry;
			if (current == null) {
				current = this.backend.create(this, key);
				if (current == null) {
					return null;
				}
			}
			if (!this.backend.readFirst) {
				current.touch(this.now);
				this.decision = current.state.decide(this.policy, this.cost, this.now, true);
			}
			// Else only created: the caller decides holding the entry's lock, as readers do.
			return current;
		}

	}

	/**
	 * One key's state. With {@link HitPath#COMPUTE} it is only touched inside
	 * {@code compute}; with {@link HitPath#READ_THEN_LOCK} it is guarded by its
	 * own lock, a compare-and-set flag as in the hand-written backend (spin,
	 * yield, then park briefly).
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

		/** The policy's key count, given back when the entry leaves the cache. */
		final KeyBound.Keys owner;

		/** How long after its last use the state equals a fresh one. */
		final long idleMicros;

		/** The latest time the key was used. */
		long lastMicros;

		/** Cleared, holding the lock, when the entry leaves the cache. */
		boolean live = true;

		Entry(String key, RateLimitPolicy policy, KeyBound.Keys owner, long now) {
			this.key = key;
			this.state = LimitState.create(policy, now);
			this.owner = owner;
			// In wait mode a bucket may be owed up to max-wait beyond empty, which takes that long more to repay.
			this.idleMicros = policy.idleMicros() + policy.maxWaitMicros();
			this.lastMicros = now;
		}

		void lock() {
			if (!LOCKED.compareAndSet(this, 0, 1)) {
				lockContended();
			}
		}

		private void lockContended() {
			int attempts = 0;
			while ((int) LOCKED.getOpaque(this) != 0 || !LOCKED.compareAndSet(this, 0, 1)) {
				attempts++;
				if (attempts < SPINS) {
					Thread.onSpinWait();
				}
				else if (attempts < SPINS + YIELDS) {
					Thread.yield();
				}
				else {
					LockSupport.parkNanos(PARK_NANOS);
				}
			}
		}

		void unlock() {
			LOCKED.setRelease(this, 0);
		}

		void touch(long now) {
			if (now > this.lastMicros) {
				this.lastMicros = now;
			}
		}

		boolean idleAt(long now) {
			return now - this.lastMicros >= this.idleMicros;
		}

	}

	/** Expires an entry its idle time after its last use, read or write. */
	private static final class SinceLastUse implements Expiry<String, Entry> {

		@Override
		public long expireAfterCreate(String key, Entry entry, long currentTime) {
			return entry.idleMicros * 1_000L;
		}

		@Override
		public long expireAfterUpdate(String key, Entry entry, long currentTime, long currentDuration) {
			return entry.idleMicros * 1_000L;
		}

		@Override
		public long expireAfterRead(String key, Entry entry, long currentTime, long currentDuration) {
			return entry.idleMicros * 1_000L;
		}

	}

}
