package dev.ratelimit.core;

/**
 * What a policy does when its backend cannot answer (Redis down or too slow).
 */
public enum FailureMode {

	/**
	 * Allow the request and record that the limit was not applied.
	 */
	OPEN,

	/**
	 * Reject the request as temporarily unavailable (HTTP 503 with Retry-After).
	 */
	CLOSED,

	/**
	 * Decide with an in-memory limiter of the same policy (optionally scaled to
	 * this instance's share) until the backend answers again.
	 */
	LOCAL

}
