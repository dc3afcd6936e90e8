package dev.ratelimit.budget;

import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import dev.ratelimit.core.AsyncCalls;
import dev.ratelimit.core.StoreParts;

/**
 * Where budget state lives: in this process or in Redis. Every store makes the
 * same {@link BudgetDecision}s for the same sequence of operations and times.
 * Implementations are thread-safe and throw {@link RuntimeException}s when they
 * cannot answer.
 */
public interface BudgetStore {

	/**
	 * Returns where the store keeps each key, in parts that fail alone (the
	 * masters of a Redis Cluster), so that its health is tracked per part.
	 * @return the parts; {@link StoreParts#ONE} for a store of one piece
	 */
	default StoreParts parts() {
		return StoreParts.ONE;
	}

	/**
	 * Returns whether a call may wait on I/O (a remote store): a caller on a
	 * thread that must never block (a reactive event loop) then calls off it.
	 * @return whether a call may block; {@code false} for an in-process store
	 */
	default boolean blocks() {
		return true;
	}

	/**
	 * Reserves an estimate, atomically: admitted only if every limit has room for
	 * it after what is spent and reserved.
	 * @param policy the budget
	 * @param key the storage key
	 * @param id the reservation's id, unique
	 * @param estimateMicros the amount to reserve
	 * @return the decision
	 */
	BudgetDecision reserve(BudgetPolicy policy, String key, String id, long estimateMicros);

	/**
	 * Reserves like {@link #reserve} without making the calling thread wait: for
	 * a caller that must never block (a reactive event loop). This default
	 * reserves inline when the store does not block (memory) and otherwise on
	 * {@code blocking}; a remote store with an asynchronous client (Redis) sends
	 * the same call without waiting for its reply.
	 * @param policy the budget
	 * @param key the storage key
	 * @param id the reservation's id, unique
	 * @param estimateMicros the amount to reserve
	 * @param blocking runs a call that can only wait synchronously
	 * @return the decision; a failure of the store fails the stage
	 */
	default CompletionStage<BudgetDecision> reserveAsync(BudgetPolicy policy, String key, String id,
			long estimateMicros, Executor blocking) {
		return AsyncCalls.call(blocks(), blocking, () -> reserve(policy, key, id, estimateMicros));
	}

	/**
	 * Adds to a live reservation, atomically: admitted only if every limit has
	 * room for the addition after what is spent and reserved; the reservation's
	 * lease is renewed too. A reservation no longer live is refused. Stores
	 * that cannot do it keep this default, and streams that would outgrow their
	 * reservation then stop at it.
	 * @param policy the budget
	 * @param key the storage key
	 * @param id the reservation's id
	 * @param moreMicros the amount to add, 0 to renew the lease only
	 * @return the decision: allowed when the reservation grew
	 * @throws UnsupportedOperationException if this store cannot extend reservations
	 */
	default BudgetDecision extend(BudgetPolicy policy, String key, String id, long moreMicros) {
		throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot extend reservations");
	}

	/**
	 * Settles a reservation to its actual cost; idempotent.
	 * @param policy the budget
	 * @param key the storage key
	 * @param id the reservation's id
	 * @param actualMicros the actual cost
	 * @return the state after settling
	 */
	BudgetDecision settle(BudgetPolicy policy, String key, String id, long actualMicros);

	/**
	 * Releases a reservation without charging it; idempotent.
	 * @param policy the budget
	 * @param key the storage key
	 * @param id the reservation's id
	 * @return the state after releasing
	 */
	BudgetDecision release(BudgetPolicy policy, String key, String id);

	/**
	 * Reports what is spent, reserved and remaining.
	 * @param policy the budget
	 * @param key the storage key
	 * @return the state
	 */
	BudgetDecision peek(BudgetPolicy policy, String key);

	/**
	 * Forgets one key's state: its spend, its reservations and their markers, so
	 * that the key starts with the full budget. An operator's tool (the
	 * {@code ratelimits} endpoint); stores that cannot do it keep this default.
	 * @param policy the budget
	 * @param key the storage key
	 * @throws UnsupportedOperationException if this store cannot reset keys
	 */
	default void reset(BudgetPolicy policy, String key) {
		throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot reset keys");
	}

	/**
	 * Returns the calendar windows around a time, per limit of a budget.
	 * @param policy the budget
	 * @param nowMicros the time
	 * @return the spans, {@code null} for rolling limits
	 */
	static BudgetWindow.Span[] spans(BudgetPolicy policy, long nowMicros) {
		BudgetWindow.Span[] spans = new BudgetWindow.Span[policy.limits().size()];
		for (int i = 0; i < spans.length; i++) {
			BudgetWindow window = policy.limits().get(i).window();
			if (window.kind() != BudgetWindow.Kind.ROLLING) {
				spans[i] = window.span(nowMicros, policy.zone());
			}
		}
		return spans;
	}

}
