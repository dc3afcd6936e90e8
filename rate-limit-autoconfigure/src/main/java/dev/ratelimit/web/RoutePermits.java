package dev.ratelimit.web;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;
import org.springframework.expression.EvaluationContext;

import dev.ratelimit.concurrency.ConcurrencyLimiter;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.core.AsyncCalls;
import dev.ratelimit.core.DecisionThreads;
import dev.ratelimit.key.AppliedLimit;

/**
 * Takes the permits of a route's concurrency caps, for the servlet and the
 * reactive route filters alike: one per cap, in order, each cap's key (an
 * adaptive cap's priority) read from the request; a cap the caller may see is
 * registered with the request's disclosures so that its refusal can name it.
 * A refusal gives back the permits already taken, as abandoned calls.
 * <p>
 * How a request ended is told to each permit ({@link #ending}): a status of
 * 500 or more, or a failure, is a drop for an adaptive cap's estimate.
 */
final class RoutePermits {

	private final ConcurrencyLimiter concurrency;

	RoutePermits(ConcurrencyLimiter concurrency) {
		this.concurrency = concurrency;
	}

	/**
	 * Takes a permit of every cap on the calling thread.
	 * @param caps the caps, in order
	 * @param context the request's evaluation context
	 * @param disclosures the limits the caller may see
	 * @return the permits, to release when the response is complete
	 * @throws dev.ratelimit.concurrency.ConcurrencyLimitExceededException when a cap refuses
	 */
	List<Permit> take(List<AppliedLimit<ConcurrencyPolicy>> caps, EvaluationContext context,
			Disclosures disclosures) {
		List<Permit> permits = new ArrayList<>(caps.size());
		try {
			for (AppliedLimit<ConcurrencyPolicy> cap : caps) {
				AppliedLimit.Resolved<ConcurrencyPolicy> call = resolve(cap, context, disclosures);
				if (call != null) {
					permits.add(this.concurrency.acquire(call.limit(), call.key()));
				}
			}
		}
		catch (RuntimeException ex) {
			release(permits, Permit.Ending.ABANDONED);
			throw ex;
		}
		return permits;
	}

	/**
	 * Takes a permit of every cap without making the calling thread wait: inline
	 * where that cannot block, else as the limiter takes it asynchronously.
	 * @param caps the caps, in order
	 * @param context the request's evaluation context
	 * @param disclosures the limits the caller may see
	 * @param threads where a wait or a blocking store call runs
	 * @return the permits; the stage fails with the refusal, the permits taken given back
	 */
	CompletionStage<List<Permit>> takeAsync(List<AppliedLimit<ConcurrencyPolicy>> caps, EvaluationContext context,
			Disclosures disclosures, DecisionThreads threads) {
		CompletionStage<List<Permit>> taken = CompletableFuture.completedFuture(new ArrayList<>(caps.size()));
		for (AppliedLimit<ConcurrencyPolicy> cap : caps) {
			taken = taken.thenCompose((permits) -> {
				AppliedLimit.Resolved<ConcurrencyPolicy> call;
				try {
					call = resolve(cap, context, disclosures);
				}
				catch (RuntimeException ex) {
					// A key a cap rejects: the permits of the caps before it go back, as on a refusal.
					release(permits, Permit.Ending.ABANDONED);
					throw ex;
				}
				if (call == null) {
					return CompletableFuture.completedFuture(permits);
				}
				return AsyncCalls.started(() -> this.concurrency.acquireAsync(call.limit(), call.key(), threads))
					.handle((permit, failure) -> {
						if (failure != null) {
							release(permits, Permit.Ending.ABANDONED);
							throw AsyncCalls.cause(failure);
						}
						permits.add(permit);
						return permits;
					});
			});
		}
		return taken;
	}

	/**
	 * Returns whether taking the caps' permits may block the calling thread.
	 * @param caps the caps
	 * @return whether any may
	 */
	boolean mayBlock(List<AppliedLimit<ConcurrencyPolicy>> caps) {
		for (AppliedLimit<ConcurrencyPolicy> cap : caps) {
			if (this.concurrency.mayBlock(cap.limit())) {
				return true;
			}
		}
		return false;
	}

	private static AppliedLimit.@Nullable Resolved<ConcurrencyPolicy> resolve(AppliedLimit<ConcurrencyPolicy> cap,
			EvaluationContext context, Disclosures disclosures) {
		ConcurrencyPolicy policy = cap.limit();
		// A route rule is enforced on the request itself.
		if (policy.visibility().disclosed(policy.key(), true)) {
			disclosures.add(policy.name());
		}
		return cap.resolve(context);
	}

	/**
	 * Gives permits back.
	 * @param permits the permits
	 * @param ending how the request ended
	 */
	static void release(List<Permit> permits, Permit.Ending ending) {
		for (Permit permit : permits) {
			permit.release(ending);
		}
	}

	/**
	 * A request's permits, given back once: when it is served, fails or is
	 * cancelled. Permits that arrive after it was given up (taken
	 * asynchronously while the request was cancelled) go back at once.
	 */
	static final class Held {

		/** Stands for permits given back, so that later ones are given back at once. */
		private static final List<Permit> RELEASED = new ArrayList<>(0);

		private final AtomicReference<List<Permit>> permits = new AtomicReference<>();

		/**
		 * Holds permits just taken.
		 * @param taken the permits
		 */
		void hold(List<Permit> taken) {
			if (!this.permits.compareAndSet(null, taken)) {
				RoutePermits.release(taken, Permit.Ending.ABANDONED);
			}
		}

		/**
		 * Gives the permits back, once.
		 * @param ending how the request ended
		 */
		void release(Permit.Ending ending) {
			List<Permit> held = this.permits.getAndSet(RELEASED);
			if (held != null && held != RELEASED) {
				RoutePermits.release(held, ending);
			}
		}

	}

	/**
	 * Returns how a request ended for an adaptive cap: a server error or a
	 * failure is a drop; any other answer, a client error included, a success.
	 * @param status the response's status
	 * @param failed whether the request failed (an exception, an asynchronous error or timeout)
	 * @return the ending
	 */
	static Permit.Ending ending(int status, boolean failed) {
		return (failed || status >= 500) ? Permit.Ending.FAILED : Permit.Ending.SUCCEEDED;
	}

}
