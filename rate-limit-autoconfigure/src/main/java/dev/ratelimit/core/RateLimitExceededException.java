package dev.ratelimit.core;

import java.util.List;

/**
 * Thrown when a call is over one or more of its limits (HTTP 429, or 503 when
 * the caller may see none of them). Carries the full outcome: every policy's
 * decision, the names of the violated policies and the time to wait.
 */
public class RateLimitExceededException extends RateLimitException {

	private final transient RateLimitOutcome outcome;

	/**
	 * Creates an exception for a denied outcome.
	 * @param outcome the outcome, with at least one denying policy
	 */
	public RateLimitExceededException(RateLimitOutcome outcome) {
		super("Rate limit exceeded for " + outcome.violatedPolicies() + "; retry after "
				+ outcome.retryAfterMicros() / 1000 + " ms", null);
		this.outcome = outcome;
	}

	/** @return every policy's decision */
	public RateLimitOutcome getOutcome() {
		return this.outcome;
	}

	/** @return the names of the policies that denied the call */
	public List<String> getViolatedPolicies() {
		return this.outcome.violatedPolicies();
	}

	/** @return the time to wait before retrying, in microseconds */
	public long getRetryAfterMicros() {
		return this.outcome.retryAfterMicros();
	}

}
