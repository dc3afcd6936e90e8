package dev.ratelimit.core;

/**
 * One policy's part of a decision, as a backend sees it: the policy, the
 * storage key and the cost.
 *
 * @param policy the policy
 * @param key the storage key built by {@link LimitKeys}
 * @param cost units to take, {@code 0 <= cost <= policy.capacity()}
 */
public record Acquisition(RateLimitPolicy policy, String key, long cost) {
}
