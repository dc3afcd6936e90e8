package dev.ratelimit.budget;

import java.util.List;

import dev.ratelimit.core.RateLimitException;

/**
 * Thrown when a reservation does not fit a budget (HTTP 429, or 503 when the
 * caller may not see the budget): what is spent and
 * reserved plus the estimate would exceed one of its amounts. Carries the
 * budget, its state and when a retry could succeed.
 */
public class BudgetExceededException extends RateLimitException {

	private final transient BudgetPolicy policy;

	private final transient BudgetDecision decision;

	/**
	 * Creates an exception.
	 * @param policy the budget
	 * @param decision the refusing decision
	 * @param estimateMicros the estimate that did not fit
	 */
	public BudgetExceededException(BudgetPolicy policy, BudgetDecision decision, long estimateMicros) {
		super("Budget '" + policy.name() + "' cannot cover " + Amounts.format(estimateMicros) + " " + policy.unit()
				+ "; retry after " + decision.retryAfterMicros() / 1000 + " ms", null);
		this.policy = policy;
		this.decision = decision;
	}

	/** @return the budget */
	public BudgetPolicy getPolicy() {
		return this.policy;
	}

	/** @return the refusing decision */
	public BudgetDecision getDecision() {
		return this.decision;
	}

	/** @return the budget's name, as the violated policy */
	public List<String> getViolatedPolicies() {
		return List.of(this.policy.name());
	}

	/** @return when a retry could succeed, in microseconds */
	public long getRetryAfterMicros() {
		return this.decision.retryAfterMicros();
	}

}
