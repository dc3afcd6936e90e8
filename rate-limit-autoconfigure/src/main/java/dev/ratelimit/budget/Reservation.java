package dev.ratelimit.budget;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

/**
 * An amount held against a budget until the work's actual cost is known.
 * Settle it with the actual cost, or release it; whichever comes first counts
 * and later calls do nothing, so a retried settle never charges twice. A
 * reservation never settled returns to the budget when its lease expires.
 */
public final class Reservation {

	private final CostBudgets budgets;

	private final BudgetPolicy policy;

	private final String key;

	private final String id;

	private final long estimateMicros;

	private final @Nullable BudgetDecision decision;

	private final @Nullable BudgetStore store;

	private final AtomicBoolean finished = new AtomicBoolean();

	private final AtomicLong reservedMicros;

	Reservation(CostBudgets budgets, BudgetPolicy policy, String key, String id, long estimateMicros,
			@Nullable BudgetDecision decision, @Nullable BudgetStore store) {
		this.budgets = budgets;
		this.policy = policy;
		this.key = key;
		this.id = id;
		this.estimateMicros = estimateMicros;
		this.decision = decision;
		this.store = store;
		this.reservedMicros = new AtomicLong(estimateMicros);
	}

	/**
	 * Reserves more against the budget for this reservation, atomically: only
	 * if every limit still has room for it. Its lease is renewed as well.
	 * @param moreMicros the amount to add, 0 to renew the lease only
	 * @return whether the reservation grew; {@code false} once it is finished,
	 * when its lease has lapsed, or when the budget refuses or cannot be asked
	 */
	public boolean extend(long moreMicros) {
		if (moreMicros < 0 || moreMicros > Amounts.MAX_MICROS) {
			throw new IllegalArgumentException("extension of budget '" + this.policy.name() + "' is outside 0.."
					+ Amounts.format(Amounts.MAX_MICROS) + ": " + Amounts.format(moreMicros));
		}
		if (this.finished.get() || !this.budgets.extend(this, moreMicros)) {
			return false;
		}
		this.reservedMicros.addAndGet(moreMicros);
		return true;
	}

	/**
	 * Charges the actual cost in place of the estimate, refunding or charging the
	 * difference.
	 * @param actualMicros the actual cost in micro-units
	 * @return the budget's state after settling, or the reservation's when it had
	 * already been settled or released; {@code null} when the reservation is held
	 * nowhere (its budget not enforced)
	 */
	public @Nullable BudgetDecision settle(long actualMicros) {
		if (actualMicros < 0 || actualMicros > Amounts.MAX_MICROS) {
			throw new IllegalArgumentException("actual cost of budget '" + this.policy.name()
					+ "' is outside 0.." + Amounts.format(Amounts.MAX_MICROS) + ": " + Amounts.format(actualMicros));
		}
		if (!this.finished.compareAndSet(false, true)) {
			return this.decision;
		}
		return this.budgets.settle(this, actualMicros);
	}

	/**
	 * Returns the estimate to the budget without charging anything.
	 * @return the budget's state after releasing; {@code null} when the reservation
	 * is held nowhere (its budget not enforced)
	 */
	public @Nullable BudgetDecision release() {
		if (!this.finished.compareAndSet(false, true)) {
			return this.decision;
		}
		return this.budgets.release(this);
	}

	/** @return the budget */
	public BudgetPolicy policy() {
		return this.policy;
	}

	/** @return the reservation's id */
	public String id() {
		return this.id;
	}

	/** @return the storage key */
	String key() {
		return this.key;
	}

	/** @return the store that holds the reservation, or {@code null} when it was not enforced */
	@Nullable BudgetStore store() {
		return this.store;
	}

	/** @return the reserved estimate in micro-units */
	public long estimateMicros() {
		return this.estimateMicros;
	}

	/** @return what the reservation holds in micro-units: its estimate and every extension */
	public long reservedMicros() {
		return this.reservedMicros.get();
	}

	/** @return the decision that admitted the reservation, or {@code null} when it is held nowhere */
	public @Nullable BudgetDecision decision() {
		return this.decision;
	}

	/** @return whether the reservation was settled or released */
	public boolean isFinished() {
		return this.finished.get();
	}

}
