package dev.ratelimit.budget;

import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.KeyBound;
import dev.ratelimit.core.KeyedStates;
import dev.ratelimit.core.TimeSource;

/**
 * Keeps budget state in this process: exact for one instance, and the local
 * fallback of budgets whose Redis is down. The keys, their locks, their bound
 * and the overflow slots are {@link KeyedStates}; operations on one key hold
 * its lock.
 * <p>
 * Budgets are not a cache: spend is never forgotten inside its window. A key
 * is dropped only once its windows have ended and its reservations and
 * settled markers expired, when forgetting it changes nothing. Each budget
 * keeps at most its {@link KeyBound} of keys; when it holds that many, a new
 * tenant reserves on one of the budget's overflow slots, each holding the
 * budget's own amounts for the tenants that share it, so no tenant spends
 * beyond its budget, whatever the failure mode. Evicting a key to make room
 * instead would hand its tenant a fresh budget.
 * <p>
 * A reservation is settled, extended or released on the state it was taken
 * on, found by its id: the key's own entry if that holds it, else the key's
 * slot (a key stays on its slot while a reservation lives there). A settle
 * whose reservation is no longer held anywhere (it outlived its timeout and
 * its key was forgotten) still records the spend, on the state the key is
 * decided on now, within the bound; an extend or release of such a
 * reservation is answered by the state the key reads.
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
	 * @param bound the most keys kept per budget, its overflow slots, and the
	 * count of drops and overflow decisions
	 */
	public InMemoryBudgetStore(TimeSource time, KeyBound bound) {
		this.time = time;
		this.states = new KeyedStates<>((policy, now) -> new Held(freshState(policy, now)), bound,
				time.currentTimeMicros());
	}

	@Override
	public BudgetDecision reserve(BudgetPolicy policy, String key, String id, long estimateMicros) {
		return apply(policy, this.states.lock(policy, key, now()),
				(state) -> state.reserve(policy, spans(policy), id, estimateMicros, now()));
	}

	@Override
	public BudgetDecision extend(BudgetPolicy policy, String key, String id, long moreMicros) {
		// A reservation held nowhere is no longer live: the state the key reads refuses it.
		return apply(policy, holderOrRead(policy, key, id),
				(state) -> state.extend(policy, spans(policy), id, moreMicros, now()));
	}

	@Override
	public BudgetDecision settle(BudgetPolicy policy, String key, String id, long actualMicros) {
		// A reservation that outlived its key still records the spend: spend is never dropped.
		Held holder = holder(policy, key, id);
		return apply(policy, (holder != null) ? holder : this.states.lock(policy, key, now()),
				(state) -> state.settle(policy, spans(policy), id, actualMicros, now()));
	}

	@Override
	public BudgetDecision release(BudgetPolicy policy, String key, String id) {
		// Nothing to give back to a key already forgotten: a fresh state, not kept.
		return apply(policy, holderOrRead(policy, key, id),
				(state) -> state.release(policy, spans(policy), id, now()));
	}

	@Override
	public BudgetDecision peek(BudgetPolicy policy, String key) {
		return apply(policy, this.states.lockToRead(policy, key), (state) -> state.peek(policy, spans(policy), now()));
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
	 * Returns the state a reservation was taken on, locked, or {@code null} if
	 * none holds it any more: the key's own entry, else its slot.
	 */
	private @Nullable Held holder(BudgetPolicy policy, String key, String id) {
		Held own = this.states.lockIfPresent(key);
		if (own != null && own.state.holds(id, now())) {
			return own;
		}
		unlock(own);
		Held slot = this.states.lockSlotIfPresent(policy, key);
		if (slot != null && slot.state.holds(id, now())) {
			return slot;
		}
		unlock(slot);
		return null;
	}

	/**
	 * Returns the state a reservation was taken on, locked, or else what the key
	 * reads (its own entry, its slot, or {@code null} for a fresh state): where an
	 * unknown reservation is answered, as the Redis store answers it on the key.
	 */
	private @Nullable Held holderOrRead(BudgetPolicy policy, String key, String id) {
		Held holder = holder(policy, key, id);
		return (holder != null) ? holder : this.states.lockToRead(policy, key);
	}

	private static void unlock(@Nullable Held entry) {
		if (entry != null) {
			entry.unlock();
		}
	}

	/**
	 * Applies an operation to a state and unlocks it; {@code null} has the
	 * operation see a fresh state that is not kept.
	 */
	private BudgetDecision apply(BudgetPolicy policy, @Nullable Held locked,
			Function<BudgetState, BudgetDecision> operation) {
		if (locked == null) {
			return operation.apply(freshState(policy, now()));
		}
		try {
			BudgetDecision decision = operation.apply(locked.state);
			locked.freshAt(locked.state.forgettableAt(policy));
			return decision;
		}
		finally {
			locked.unlock();
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
	 * A key's budget state in the keyed states, or an overflow slot's. A
	 * {@link BudgetState} is also the Redis store's model, so it is held here
	 * rather than made an entry itself.
	 */
	private static final class Held extends KeyedStates.Entry {

		private final BudgetState state;

		Held(BudgetState state) {
			this.state = state;
		}

	}

	/** @return {@code false}: budgets are kept in this process's memory, without I/O */
	@Override
	public boolean blocks() {
		return false;
	}

}
