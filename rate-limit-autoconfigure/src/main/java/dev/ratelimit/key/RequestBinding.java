package dev.ratelimit.key;

import java.lang.reflect.Method;

import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.core.RateLimitOutcome;
import dev.ratelimit.core.Visibility;

/**
 * Connects limited method calls to the web request they run in, if any: key
 * expressions read the request, and outcomes become response headers, for the
 * limits whose {@link Visibility} lets the caller see them.
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
	 * Registers a limit an annotated method applies to the current request, so
	 * that its response names the limit (in header fields and refusals) only if
	 * its visibility allows: {@link Visibility#AUTO} allows it when the method is
	 * the request's handler itself and the key is the caller's. Called before the
	 * limit decides; does nothing outside a web request.
	 * @param policy the limit's name
	 * @param visibility its visibility
	 * @param keyExpression its key expression in force
	 * @param method the annotated method applying it
	 */
	default void applying(String policy, Visibility visibility, String keyExpression, Method method) {
	}

	/**
	 * Returns whether a method is the current web request's handler itself,
	 * rather than a service the handler calls.
	 * @param method the method
	 * @return whether it handles the current request; {@code false} outside a web request
	 */
	default boolean isHandler(Method method) {
		return false;
	}

	/**
	 * Records a budget's state for the current request's response headers; does
	 * nothing outside a web request.
	 * @param policy the budget
	 * @param decision its state
	 */
	default void recordBudget(BudgetPolicy policy, BudgetDecision decision) {
	}

}
