package dev.ratelimit.core;

/**
 * What a policy does when its key cannot be resolved for a request, for example
 * when the header it is keyed by is absent or the key expression yields
 * {@code null}.
 */
public enum MissingKeyAction {

	/**
	 * Count every request without a key against one shared bucket of the policy.
	 * Omitting the key therefore never bypasses the limit.
	 */
	SHARED,

	/**
	 * Skip this policy for the request.
	 */
	ALLOW,

	/**
	 * Reject the request as malformed (HTTP 400).
	 */
	REJECT

}
