package dev.ratelimit.budget;

import java.util.function.Function;

import dev.ratelimit.core.KeyBound;
import dev.ratelimit.core.KeyedStates;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.TooManyKeysException;

/**
 * Keeps budget state in this process: exact for one instance, and the local
 * fallback of budgets whose Redis is down. The keys, their locks and their
 * bound are {@link KeyedStates}; operations on one key hold its lock.
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

	private final TimeSource time;

	private final KeyedStates<BudgetPolicy, Held> states;

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
		this.states = new KeyedStates<>((policy, now) -> new Held(freshState(policy, now)), bound,
				time.currentTimeMicros());
	}

	@Override
	public BudgetDecision reserve(BudgetPolicy policy, String key, String id, long estimateMicros) {
		return apply(policy, key, Creation.WITHIN_BOUND,
				(state) -> state.reserve(policy, spans(policy), id, estimateMicros, now()));
	}

	@Override
	public BudgetDecision extend(BudgetPolicy policy, String key, String id, long moreMicros) {
		// A forgotten key holds no live reservation: the fresh state refuses.
		return apply(policy, key, Creation.NEVER,
				(state) -> state.extend(policy, spans(policy), id, moreMicros, now()));
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
		this.states.remove(key);
	}

	/**
	 * Returns the number of keys held, after dropping forgettable ones (an
	 * estimate while other threads run).
	 * @return the number of keys
	 */
	public long size() {
		return this.states.size(now());
	}

	/**
	 * Applies an operation to a key's state, with the key's lock held.
	 * @param creation whether an absent key is added; when it is not, the
	 * operation sees a fresh state that is not kept
	 * @throws TooManyKeysException if the key is new, to be added within the bound,
	 * and the budget holds its bound of keys
	 */
	private BudgetDecision apply(BudgetPolicy policy, String key, Creation creation,
			Function<BudgetState, BudgetDecision> operation) {
		long now = now();
		Held entry = switch (creation) {
			case NEVER -> this.states.lockIfPresent(key);
			case WITHIN_BOUND -> this.states.lock(policy, key, now);
			case ALWAYS -> this.states.lockEvenAtBound(policy, key, now);
		};
		if (entry == null) {
			return operation.apply(freshState(policy, now));
		}
		try {
			BudgetDecision decision = operation.apply(entry.state);
			entry.freshAt(entry.state.forgettableAt(policy));
			return decision;
		}
		finally {
			entry.unlock();
		}
	}

	private static BudgetState freshState(BudgetPolicy policy, long nowMicros) {
		return new BudgetState(policy.limits().size());
	}

	private long now() {
		return this.time.currentTimeMicros();
	}

	private BudgetWindow.Span[] spans(BudgetPolicy policy) {
		return BudgetStore.spans(policy, now());
	}

	/**
	 * A key's budget state in the keyed states. A {@link BudgetState} is also the
	 * Redis store's model, so it is held here rather than made an entry itself.
	 */
	private static final class Held extends KeyedStates.Entry {

		private final BudgetState state;

		Held(BudgetState state) {
			this.state = state;
		}

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

}
