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


	/**
	 * Returns whether taking a permit of a cap may block the calling thread:
	 * when its store waits on I/O, or the cap waits for a permit (max-wait). A
	 * caller on a thread that must never block (a reactive event loop) then
	 * takes it off that thread.
	 * @param policy the cap
	 * @return whether taking a permit may block
	 */
	default boolean mayBlock(ConcurrencyPolicy policy) {
		return true;
	}

}
