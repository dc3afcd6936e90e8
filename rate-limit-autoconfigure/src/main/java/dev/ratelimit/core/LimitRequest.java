package dev.ratelimit.core;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * One policy to apply to one call: the policy, the caller's key as resolved
 * (or {@code null} when it could not be), the cost of the call, and whether
 * the call counts by its outcome.
 *
 * @param policy the policy
 * @param key the caller's raw key, {@code null} when unresolved
 * @param cost the units the call takes
 * @param byOutcome whether the units are taken provisionally, to be given back
 * after the call when its outcome does not count (see {@link ProvisionalTakes});
 * the policy must have no {@link RateLimitPolicy#outcomeCountingProblem()}
 */
public record LimitRequest(RateLimitPolicy policy, @Nullable String key, long cost, boolean byOutcome) {

	/**
	 * Creates a request.
	 */
	public LimitRequest {
		Objects.requireNonNull(policy, "policy");
		if (byOutcome && policy.outcomeCountingProblem() != null) {
			throw new IllegalArgumentException("Policy '" + policy.name() + "' cannot count by outcome: "
					+ policy.outcomeCountingProblem());
		}
	}

	/**
	 * Creates a request whose units count whatever the call's outcome.
	 * @param policy the policy
	 * @param key the caller's raw key, {@code null} when unresolved
	 * @param cost the units the call takes
	 */
	public LimitRequest(RateLimitPolicy policy, @Nullable String key, long cost) {
		this(policy, key, cost, false);
	}

}
