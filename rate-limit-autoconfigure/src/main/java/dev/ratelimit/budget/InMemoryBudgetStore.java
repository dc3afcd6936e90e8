package dev.ratelimit.budget;

import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.RemovalCause;

import dev.ratelimit.core.IdleSweeper;
import dev.ratelimit.core.KeyBound;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.TooManyKeysException;

/**
 * Keeps budget state in this process: exact for one instance, and the local
 * fallback of budgets whose Redis is down. Operations on one key are
 * serialised by the cache's per-key compute.
 * <p>
 * Budgets are not a cache: spend is never forgotten inside its window. A key
 * is dropped only once its windows have ended and its reservations and
 * settled markers expired, when forgetting it changes nothing. Each budget
 * keeps at most its {@link KeyBound} of keys; when it holds that many, a
 * reservation for a new key is refused with {@link TooManyKeysException}, and
 * {@link CostBudgets} applies the budget's failure mode to it. Evicting a key
 * to make room instead would hand its tenant a fresh budget.
 */
public final class InMemoryBudgetStore implements BudgetStore {

	private static final long TOLERANCE_NANOS = TimeUnit.SECONDS.toNanos(1);

	private final TimeSource time;

	private final KeyBound bound;

	private final Cache<String, Entry> entries;

	/** Runs the cache's expiry at the bound, once a second at most. */
	private final IdleSweeper sweeper;

	/**
	 * Creates a store.
	 * @param time the clock; its readings must be microseconds since the epoch,
	 * since calendar windows are placed by it
	 * @param maxKeys the most keys kept per budget
	 */
	public InMemoryBudgetStore(TimeSource time, long maxKeys) {
		this(time, new KeyBound(maxKeys));
	}

	/**
	 * Creates a store.
	 * @param time the clock; its readings must be microseconds since the epoch,
	 * since calendar windows are placed by it
	 * @param bound the most keys kept per budget, and the count of drops and refusals
	 */
	public InMemoryBudgetStore(TimeSource time, KeyBound bound) {
		this.time = time;
		this.bound = bound;
		this.entries = Caffeine.newBuilder()
			.expireAfter(new UntilForgettable())
			.ticker(() -> time.currentTimeMicros() * 1_000L)
			.executor(Runnable::run)
			.removalListener(InMemoryBudgetStore::removed)
			.build();
		this.sweeper = new IdleSweeper(1_000_000L, time.currentTimeMicros(), (now) -> this.entries.cleanUp());
	}

	@Override
	public BudgetDecision reserve(BudgetPolicy policy, String key, String id, long estimateMicros) {
		return apply(policy, key, Creation.WITHIN_BOUND,
				(state) -> state.reserve(policy, spans(policy), id, estimateMicros, now()));
	}

	@Override
	public BudgetDecision settle(BudgetPolicy policy, String key, String id, long actualMicros) {
		// Settling a key already forgotten (its reservation outlived its lease) still records the spend,
		// even at the bound: spend is never dropped, and such settles are few.
		return apply(policy, key, Creation.ALWAYS,
				(state) -> state.settle(policy, spans(policy), id, actualMicros, now()));
	}

	@Override
	public BudgetDecision release(BudgetPolicy policy, String key, String id) {
		// Nothing to give back to a key already forgotten.
		return apply(policy, key, Creation.NEVER, (state) -> state.release(policy, spans(policy), id, now()));
	}

	@Override
	public BudgetDecision peek(BudgetPolicy policy, String key) {
		return apply(policy, key, Creation.NEVER, (state) -> state.peek(policy, spans(policy), now()));
	}

	@Override
	public void reset(BudgetPolicy policy, String key) {
		this.entries.invalidate(key);
	}

	/**
	 * Applies an operation to a key's state.
	 * @param creation whether an absent key is added; when it is not, the
	 * operation sees a fresh state that is not kept
	 * @throws TooManyKeysException if the key is new, to be added within the bound,
	 * and the budget holds its bound of keys
	 */
	private BudgetDecision apply(BudgetPolicy policy, String key, Creation creation,
			Function<BudgetState, BudgetDecision> operation) {
		KeyBound.Keys keys = this.bound.of(policy.name());
		if (creation == Creation.WITHIN_BOUND && keys.count() >= this.bound.maxKeysPerPolicy()
				&& this.entries.getIfPresent(key) == null) {
			// At the bound: drop what has become forgettable before refusing a newcomer (once a
			// second at most, so that a flood of newcomers does not queue on the cache's lock).
			this.sweeper.sweepIfDue(now());
		}
		BudgetDecision[] decision = new BudgetDecision[1];
		// compute holds the key's lock and sees an expired entry as absent, so no
		// thread can work on an entry another has already replaced.
		this.entries.asMap().compute(key, (k, entry) -> {
			Entry current = entry;
			if (current == null) {
				if (creation == Creation.NEVER) {
					decision[0] = operation.apply(new BudgetState(policy.limits().size()));
					return null;
				}
				if (creation == Creation.ALWAYS) {
					keys.add();
				}
				else if (!keys.tryAdd()) {
					throw keys.refuse();
				}
				current = new Entry(policy.limits().size(), keys);
			}
			decision[0] = operation.apply(current.state);
			long forgettable = current.state.forgettableAt(policy);
			current.expiresAtNanos = (forgettable == BudgetState.NONE) ? 0
					: forgettable * 1_000L + TOLERANCE_NANOS;
			return current;
		});
		return decision[0];
	}

	/** Gives a key's slot back when it leaves the cache: forgettable, or reset by an operator. */
	private static void removed(String key, Entry entry, RemovalCause cause) {
		if (entry == null || cause == RemovalCause.REPLACED) {
			return;
		}
		if (cause == RemovalCause.EXPIRED) {
			entry.owner.dropped();
		}
		else {
			entry.owner.removed();
		}
	}

	private long now() {
		return this.time.currentTimeMicros();
	}

	private BudgetWindow.Span[] spans(BudgetPolicy policy) {
		return BudgetStore.spans(policy, now());
	}

	/** Whether an operation on an absent key adds it. */
	private enum Creation {

		/** Never: the operation reads a fresh state that is not kept. */
		NEVER,

		/** Only within the budget's bound of keys. */
		WITHIN_BOUND,

		/** Always: what it records must not be lost. */
		ALWAYS

	}

	private static final class Entry {

		final BudgetState state;

		/** The budget's key count, given back when the entry leaves the cache. */
		final KeyBound.Keys owner;

		volatile long expiresAtNanos;

		Entry(int limits, KeyBound.Keys owner) {
			this.state = new BudgetState(limits);
			this.owner = owner;
		}

	}

	/**
	 * Keeps an entry until its state is forgettable, measured from the last write.
	 */
	private static final class UntilForgettable implements Expiry<String, Entry> {

		@Override
		public long expireAfterCreate(String key, Entry entry, long currentTime) {
			return Math.max(TOLERANCE_NANOS, entry.expiresAtNanos - currentTime);
		}

		@Override
		public long expireAfterUpdate(String key, Entry entry, long currentTime, long currentDuration) {
			return Math.max(TOLERANCE_NANOS, entry.expiresAtNanos - currentTime);
		}

		@Override
		public long expireAfterRead(String key, Entry entry, long currentTime, long currentDuration) {
			return currentDuration;
		}

	}

}
