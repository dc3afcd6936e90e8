package dev.ratelimit.budget;

/**
 * Hears what budgets refuse and charge, for metrics. Called on the request
 * thread: implementations must be fast and must not throw.
 */
public interface BudgetListener {

	/**
	 * A reservation did not fit its budget.
	 * @param policy the budget
	 */
	default void refused(BudgetPolicy policy) {
	}

	/**
	 * A reservation was settled to its actual cost.
	 * @param policy the budget
	 * @param actualMicros the cost charged, in micro-units
	 */
	default void settled(BudgetPolicy policy, long actualMicros) {
	}

}
