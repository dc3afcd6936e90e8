package dev.ratelimit.core;

/**
 * Thrown when a call's cost is not a usable number of units: negative, not a
 * number, not a whole number, or larger than the policy's capacity so that it
 * could never be allowed (HTTP 400).
 */
public class InvalidCostException extends RateLimitException {

	private final String policy;

	/**
	 * Creates an exception.
	 * @param policy the policy name
	 * @param message what is wrong with the cost
	 */
	public InvalidCostException(String policy, String message) {
		super(message, null);
		this.policy = policy;
	}

	/** @return the policy name */
	public String getPolicy() {
		return this.policy;
	}

}
