package dev.ratelimit.concurrency;

/**
 * Hands out permits for calls in flight, per policy and key.
 */
public interface ConcurrencyLimiter {

	/**
	 * Takes a permit, waiting up to the policy's max-wait for one to free.
	 * @param policy the policy
	 * @param key the caller's key (already resolved; {@code null} means the policy's shared permits)
	 * @return the permit, to release when the call ends
	 * @throws ConcurrencyLimitExceededException if no permit freed in time
	 */
	Permit acquire(ConcurrencyPolicy policy, String key);

}
