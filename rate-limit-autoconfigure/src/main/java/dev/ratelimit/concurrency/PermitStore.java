package dev.ratelimit.concurrency;

import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import dev.ratelimit.core.AsyncCalls;
import dev.ratelimit.core.StoreParts;

/**
 * Where the leased permits of a {@link ConcurrencyPolicy.Scope#DISTRIBUTED}
 * cap live, shared by every instance: a semaphore per storage key whose
 * permits expire unless renewed, so that an instance that dies gives its
 * permits back after one lease. Each operation is atomic. Implementations are
 * thread-safe and throw {@link RuntimeException}s when they cannot answer; the
 * {@link DistributedConcurrencyLimiter} then applies the policy's failure mode.
 */
public interface PermitStore {

	/**
	 * Returns where the store keeps each key, in parts that fail alone (the
	 * masters of a Redis Cluster), so that its health is tracked per part.
	 * @return the parts; {@link StoreParts#ONE} for a store of one piece
	 */
	default StoreParts parts() {
		return StoreParts.ONE;
	}

	/**
	 * Takes a permit if fewer than {@link ConcurrencyPolicy#permits()} are held,
	 * leased for {@link ConcurrencyPolicy#permitTtlMicros()}. Expired leases are not
	 * counted. Taking again with an id that is still held renews it and is
	 * granted, so a retry after a lost reply never takes two permits.
	 * @param policy the policy
	 * @param key the storage key
	 * @param id the permit's id, unique
	 * @return whether the permit was granted
	 */
	Attempt tryAcquire(ConcurrencyPolicy policy, String key, String id);

	/**
	 * Takes a permit like {@link #tryAcquire} without making the calling thread
	 * wait: this default calls {@link #tryAcquire} on {@code blocking}, as a
	 * store shared by instances waits on I/O; a store with an asynchronous
	 * client (Redis) sends the same call without waiting for its reply.
	 * @param policy the policy
	 * @param key the storage key
	 * @param id the permit's id, unique
	 * @param blocking runs a call that can only wait synchronously
	 * @return the attempt; a failure of the store fails the stage
	 */
	default CompletionStage<Attempt> tryAcquireAsync(ConcurrencyPolicy policy, String key, String id,
			Executor blocking) {
		return AsyncCalls.call(true, blocking, () -> tryAcquire(policy, key, id));
	}

	/**
	 * Extends a held permit's lease to {@link ConcurrencyPolicy#permitTtlMicros()}
	 * from now. A permit that expired or was released is not taken back.
	 * @param policy the policy
	 * @param key the storage key
	 * @param id the permit's id
	 * @return {@code true} if the permit is still held, {@code false} if it was lost
	 */
	boolean renew(ConcurrencyPolicy policy, String key, String id);

	/**
	 * Gives a permit back; idempotent.
	 * @param policy the policy
	 * @param key the storage key
	 * @param id the permit's id
	 */
	void release(ConcurrencyPolicy policy, String key, String id);

	/**
	 * Counts the permits held, not counting expired leases.
	 * @param policy the policy
	 * @param key the storage key
	 * @return the live holders
	 */
	int holders(ConcurrencyPolicy policy, String key);

	/**
	 * The answer to {@link #tryAcquire}.
	 * @param granted whether the permit was taken
	 * @param holders the permits held after the attempt
	 * @param retryAfterMicros when refused, how long until the earliest lease
	 * expires: a permit frees by then at the latest, unless its holder renews
	 * it; 0 when granted
	 */
	record Attempt(boolean granted, int holders, long retryAfterMicros) {

	}

}
