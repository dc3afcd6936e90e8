package dev.ratelimit.core;

/**
 * Where limiter state lives and decisions are made: in this process or in a
 * shared store such as Redis. Every backend gives the same {@link Decision} for
 * the same sequence of (time, cost) inputs on a key.
 * <p>
 * Implementations are thread-safe. They throw {@link RuntimeException}s when
 * the store cannot answer; the {@link RateLimiter} applies the policy's
 * {@link FailureMode} to those.
 */
public interface RateLimitBackend {

	/**
	 * Takes {@code cost} units from the quota stored under {@code key}, or denies.
	 * @param policy the policy deciding
	 * @param key the storage key, already namespaced and sanitised by {@link LimitKeys}
	 * @param cost units to take; {@code 0 <= cost <= policy.capacity()}
	 * @return the decision
	 */
	Decision tryConsume(RateLimitPolicy policy, String key, long cost);

}
