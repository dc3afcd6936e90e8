package dev.ratelimit.core;

import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * Where limiter state lives and decisions are made: in this process or in a
 * shared store such as Redis. Every backend gives the same {@link Decision}s for
 * the same sequence of (time, cost) inputs on a key.
 * <p>
 * Implementations are thread-safe. They throw {@link RuntimeException}s when
 * the store cannot answer; the {@link RateLimiter} applies the policies'
 * {@link FailureMode}s to those.
 */
public interface RateLimitBackend {

	/**
	 * Decides several policies for one call, all or nothing: when any denies, no
	 * policy's quota is taken. The policies that did not deny report their state
	 * without the call's cost taken.
	 * @param acquisitions the policies with their keys and costs; keys are distinct
	 * @return one decision per acquisition, in the same order
	 */
	List<Decision> tryConsumeAll(List<Acquisition> acquisitions);

	/**
	 * Decides like {@link #tryConsumeAll} without making the calling thread wait:
	 * for a caller that must never block (a reactive event loop). This default
	 * decides inline when the backend does not block (memory) and otherwise on
	 * {@code blocking}; a remote backend with an asynchronous client (Redis)
	 * sends the same call without waiting for its reply.
	 * @param acquisitions the policies with their keys and costs; keys are distinct
	 * @param blocking runs a call that can only wait synchronously
	 * @return the decisions, one per acquisition, in the same order; a failure
	 * of the store fails the stage
	 */
	default CompletionStage<List<Decision>> tryConsumeAllAsync(List<Acquisition> acquisitions, Executor blocking) {
		return AsyncCalls.call(blocks(), blocking, () -> tryConsumeAll(acquisitions));
	}

	/**
	 * Decides like {@link #tryTakeAll} without making the calling thread wait,
	 * as {@link #tryConsumeAllAsync} does.
	 * @param acquisitions the policies with their keys and costs; keys are distinct
	 * @param blocking runs a call that can only wait synchronously
	 * @return one take per acquisition, in the same order
	 */
	default CompletionStage<List<Take>> tryTakeAllAsync(List<Acquisition> acquisitions, Executor blocking) {
		return AsyncCalls.call(blocks(), blocking, () -> tryTakeAll(acquisitions));
	}

	/**
	 * Returns where the store keeps each key, in parts that fail alone (the
	 * masters of a Redis Cluster), so that its health is tracked per part.
	 * @return the parts; {@link StoreParts#ONE} for a store of one piece
	 */
	default StoreParts parts() {
		return StoreParts.ONE;
	}

	/**
	 * Returns whether a decision may wait on I/O (a remote store): a caller on
	 * a thread that must never block (a reactive event loop) then decides off
	 * it. An in-process store decides in memory and says {@code false}.
	 * @return whether a decision may block
	 */
	default boolean blocks() {
		return true;
	}

	/**
	 * Decides one policy for one call.
	 * @param policy the policy deciding
	 * @param key the storage key, already namespaced and sanitised by {@link LimitKeys}
	 * @param cost units to take; {@code 0 <= cost <= policy.capacity()}
	 * @return the decision
	 */
	default Decision tryConsume(RateLimitPolicy policy, String key, long cost) {
		return tryConsumeAll(List.of(new Acquisition(policy, key, cost))).get(0);
	}

	/**
	 * Decides like {@link #tryConsumeAll} and says what each allowed acquisition
	 * took, so that the caller can give it back with {@link #giveBack} once the
	 * call's outcome shows it does not count (counting by outcome). Only calls
	 * that count by outcome come here; every other decision stays on
	 * {@link #tryConsumeAll}.
	 * @param acquisitions the policies with their keys and costs; keys are distinct
	 * @return one take per acquisition, in the same order
	 * @throws UnsupportedOperationException if this backend cannot give units back
	 */
	default List<Take> tryTakeAll(List<Acquisition> acquisitions) {
		throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot give units back");
	}

	/**
	 * Gives back units that {@link #tryTakeAll} took, as far as they still count
	 * (see {@link LimitState#giveBack}): never more than was taken, never into a
	 * window after the one they were taken in. A failure leaves them counted,
	 * which never exceeds the limit.
	 * @param policy the policy that took them
	 * @param key the storage key
	 * @param cost the units taken
	 * @param receipt the take's {@link Take#receipt()}
	 * @throws UnsupportedOperationException if this backend cannot give units back
	 */
	default void giveBack(RateLimitPolicy policy, String key, long cost, String receipt) {
		throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot give units back");
	}

	/**
	 * Reports one key's state without taking anything and without starting to
	 * track the key: an operator's read (the {@code ratelimits} endpoint), which
	 * must neither fill a bounded store nor be refused by one.
	 * @param policy the policy
	 * @param key the storage key, already namespaced and sanitised by {@link LimitKeys}
	 * @return the decision a call of cost 0 would get
	 */
	default Decision peek(RateLimitPolicy policy, String key) {
		return tryConsume(policy, key, 0);
	}

	/**
	 * Forgets one key's state, so that its next call finds the policy's full
	 * quota. An operator's tool (the {@code ratelimits} endpoint), not part of
	 * deciding; backends that cannot do it keep this default.
	 * @param policy the policy whose state it is
	 * @param key the storage key, already namespaced and sanitised by {@link LimitKeys}
	 * @throws UnsupportedOperationException if this backend cannot reset keys
	 */
	default void reset(RateLimitPolicy policy, String key) {
		throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot reset keys");
	}

}
