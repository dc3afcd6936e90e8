package dev.ratelimit.concurrency;

import java.util.concurrent.CompletionStage;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.AsyncCalls;
import dev.ratelimit.core.DecisionThreads;

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
	Permit acquire(ConcurrencyPolicy policy, @Nullable String key);

	/**
	 * Takes a permit like {@link #acquire}, without making the calling thread
	 * wait: for a caller that must never block (a reactive event loop). This
	 * default takes it inline when that cannot block and otherwise on
	 * {@code threads}; a limiter whose store answers asynchronously (Redis)
	 * asks it without waiting, and waits for a permit to free on
	 * {@link DecisionThreads#delay}.
	 * @param policy the policy
	 * @param key the caller's key ({@code null} means the policy's shared permits)
	 * @param threads runs a call that can only block, and waits between attempts
	 * @return the permit; the stage fails with the exceptions {@link #acquire} throws
	 */
	default CompletionStage<Permit> acquireAsync(ConcurrencyPolicy policy, @Nullable String key,
			DecisionThreads threads) {
		return AsyncCalls.call(mayBlock(policy), threads, () -> acquire(policy, key));
	}

	/**
	 * Returns whether taking a permit of a cap may block the calling thread:
	 * when its store waits on I/O, or the cap waits for a permit (max-wait). A
	 * caller on a thread that must never block (a reactive event loop) takes
	 * it with {@link #acquireAsync} instead, and releases it off that thread.
	 * @param policy the cap
	 * @return whether taking a permit may block
	 */
	default boolean mayBlock(ConcurrencyPolicy policy) {
		return true;
	}

}
