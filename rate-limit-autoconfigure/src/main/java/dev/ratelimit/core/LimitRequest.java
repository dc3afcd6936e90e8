package dev.ratelimit.core;

import java.util.Objects;

/**
 * One policy to apply to one call: the policy, the caller's key as resolved
 * (or {@code null} when it could not be), and the cost of the call.
 *
 * @param policy the policy
 * @param key the caller's raw key, {@code null} when unresolved
 * @param cost the units the call takes
 */
public record LimitRequest(RateLimitPolicy policy, String key, long cost) {

	/**
	 * Creates a request.
	 */
	public LimitRequest {
		Objects.requireNonNull(policy, "policy");
	}

}
