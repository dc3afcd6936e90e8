package dev.ratelimit.core;

/**
 * Thrown when a policy with {@link MissingKeyAction#REJECT} cannot resolve its
 * key for a call (HTTP 400).
 */
public class RateLimitKeyMissingException extends RateLimitException {

	private final String policy;

	/**
	 * Creates an exception.
	 * @param policy the policy name
	 * @param keyExpression the key expression that yielded nothing
	 */
	public RateLimitKeyMissingException(String policy, String keyExpression) {
		super("Rate limit policy '" + policy + "' requires a key (" + keyExpression
				+ ") and the request does not provide one", null);
		this.policy = policy;
	}

	/** @return the policy name */
	public String getPolicy() {
		return this.policy;
	}

}
