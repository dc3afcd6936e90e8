package dev.ratelimit.core;

/**
 * A {@link Decision} together with the policy that made it.
 *
 * @param policy the policy
 * @param decision its decision
 */
public record PolicyDecision(RateLimitPolicy policy, Decision decision) {
}
