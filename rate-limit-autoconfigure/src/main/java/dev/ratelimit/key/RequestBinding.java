package dev.ratelimit.key;

import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.core.RateLimitOutcome;

/**
 * Connects limited method calls to the web request they run in, if any: key
 * expressions read the request, and allowed outcomes become response headers.
 */
public interface RequestBinding {

	/** Binding for applications without a web request: no request, no headers. */
	RequestBinding NONE = new RequestBinding() {

		@Override
		public KeyRequest current() {
			return null;
		}

		@Override
		public void record(RateLimitOutcome outcome) {
		}

	};

	/**
	 * Returns the request the current thread serves.
	 * @return the request, or {@code null} outside a web request
	 */
	KeyRequest current();

	/**
	 * Records an outcome for the current request's response headers; does nothing
	 * outside a web request.
	 * @param outcome the outcome
	 */
	void record(RateLimitOutcome outcome);

	/**
	 * Records a budget's state for the current request's response headers; does
	 * nothing outside a web request.
	 * @param policy the budget
	 * @param decision its state
	 */
	default void recordBudget(BudgetPolicy policy, BudgetDecision decision) {
	}

}
