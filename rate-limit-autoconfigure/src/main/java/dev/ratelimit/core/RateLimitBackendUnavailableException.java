package dev.ratelimit.core;

/**
 * Thrown when the backend of a {@link FailureMode#CLOSED} policy cannot answer
 * (HTTP 503 with Retry-After). Distinct from {@link RateLimitExceededException}:
 * the caller is not over its limit, the limiter is unavailable.
 */
public class RateLimitBackendUnavailableException extends RateLimitException {

	private final String policy;

	/**
	 * Creates an exception.
	 * @param policy the policy name
	 * @param cause the backend failure
	 */
	public RateLimitBackendUnavailableException(String policy, Throwable cause) {
		super("Rate limit backend unavailable for fail-closed policy '" + policy + "'", cause);
		this.policy = policy;
	}

	/** @return the policy name */
	public String getPolicy() {
		return this.policy;
	}

}
