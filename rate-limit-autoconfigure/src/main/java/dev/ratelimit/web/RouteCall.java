package dev.ratelimit.web;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

import org.jspecify.annotations.Nullable;
import org.springframework.expression.EvaluationContext;

import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.core.AsyncCalls;
import dev.ratelimit.core.DecisionThreads;
import dev.ratelimit.core.LimitRequest;
import dev.ratelimit.core.RateLimitException;
import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.core.RateLimitOutcome;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.key.AppliedLimit;
import dev.ratelimit.key.BoundPolicy;
import dev.ratelimit.key.OutcomeSettlement;

/**
 * One request's route limits, from the decision to the end of its response:
 * the one implementation of what a route rule does to a request, whatever the
 * stack. A stack's filter drives it in three moves:
 * <ol>
 * <li>{@link #advance()} decides: the policies first (their header fields are
 * set on the response), then a permit of each concurrency cap, as on an
 * annotated method. It answers {@link Step#PROCEED}, {@link Step#REFUSED}
 * (answer with {@link #refusal()}), or, for a caller that must never block,
 * {@link Step#PENDING} when the next step could block: {@link #resume()}
 * takes it asynchronously;</li>
 * <li>the filter serves the request, or sends the refusal its own way;</li>
 * <li>{@link #end} once the response is complete, failed or was cancelled:
 * the permits go back, told how the request ended, and a rule counting by
 * outcome settles by the final status, by one rule on every stack: a failure
 * counts as 500 unless the status says an error already (400 or more); no
 * status is 200. A request cancelled before it had a status keeps its units,
 * whatever the rule: its work may have run, and a client must not be able to
 * erase what a call cost by hanging up (a brute-force attempt whose password
 * was checked).</li>
 * </ol>
 * A request a cap refuses after its policies allowed it is answered there,
 * and what they counted by outcome goes back, as on an annotated method: our
 * own refusal costs the caller nothing counted by outcome. A step that fails
 * with something other than a refusal ends the call as a failure (500) before
 * the failure goes on.
 */
public final class RouteCall {

	/** Where a call stands after a step. */
	public enum Step {

		/** Allowed: serve the request, then {@linkplain #end end} the call. */
		PROCEED,

		/** Refused: answer with {@link #refusal()}, then {@linkplain #end end} the call. */
		REFUSED,

		/** The next step could block a caller that must not: {@linkplain #resume() resume} it. */
		PENDING

	}

	private static final int POLICIES = 0;

	private static final int CAPS = 1;

	private static final int DECIDED = 2;

	private static final AtomicIntegerFieldUpdater<RouteCall> ENDED = AtomicIntegerFieldUpdater
		.newUpdater(RouteCall.class, "ended");

	private final RouteLimits limits;

	private final WebExchange exchange;

	private final MatchedLimits matched;

	private final @Nullable DecisionThreads threads;

	private final Disclosures disclosures;

	private final EvaluationContext context;

	private int phase = POLICIES;

	private @Nullable List<LimitRequest> calls;

	/** Whether the decision may block: a settle then runs where blocking is allowed. */
	private boolean decisionMayBlock;

	private volatile @Nullable RateLimitOutcome outcome;

	private RoutePermits.@Nullable Held held;

	private boolean permitsMayBlock;

	private @Nullable RateLimitException refusal;

	private volatile int ended;

	RouteCall(RouteLimits limits, WebExchange exchange, MatchedLimits matched, @Nullable DecisionThreads threads) {
		this.limits = limits;
		this.exchange = exchange;
		this.matched = matched;
		this.threads = threads;
		this.disclosures = exchange.disclosures();
		// Built only if an expression needs it: the built-in keys (ip, principal, global) do not.
		this.context = limits.expressions.context(exchange, null, null);
		if (!matched.caps().isEmpty()) {
			this.held = new RoutePermits.Held();
		}
	}

	/**
	 * Takes the next steps that need not wait: all of them for a caller that
	 * may block.
	 * @return {@link Step#PROCEED}, {@link Step#REFUSED}, or {@link Step#PENDING} for a caller that must never
	 * block when the next step could
	 */
	public Step advance() {
		try {
			return steps();
		}
		catch (RuntimeException | Error ex) {
			end(-1, true, false);
			throw ex;
		}
	}

	private Step steps() {
		if (this.phase == POLICIES) {
			this.phase = CAPS;
			List<BoundPolicy> policies = this.matched.policies();
			if (!policies.isEmpty()) {
				List<LimitRequest> calls;
				try {
					calls = requests(policies);
				}
				catch (RateLimitException ex) {
					// A missing key a policy rejects, or an invalid cost: answered, never thrown at the server.
					return refuse(ex);
				}
				if (this.threads != null && this.limits.limiter.mayBlockCalls(calls)) {
					this.calls = calls;
					this.decisionMayBlock = true;
					this.phase = POLICIES;
					return Step.PENDING;
				}
				RateLimitOutcome outcome;
				try {
					outcome = this.limits.limiter.acquire(calls);
				}
				catch (RateLimitException ex) {
					return refuse(ex);
				}
				if (decided(outcome) == Step.REFUSED) {
					return Step.REFUSED;
				}
			}
		}
		if (this.phase == CAPS) {
			this.phase = DECIDED;
			List<AppliedLimit<ConcurrencyPolicy>> caps = this.matched.caps();
			if (!caps.isEmpty()) {
				RoutePermits permits = permits();
				this.permitsMayBlock = permits.mayBlock(caps);
				if (this.threads != null && this.permitsMayBlock) {
					this.phase = CAPS;
					return Step.PENDING;
				}
				try {
					held().hold(permits.take(caps, this.context, this.disclosures));
				}
				catch (RateLimitException ex) {
					return refuse(ex);
				}
			}
		}
		return Step.PROCEED;
	}

	/**
	 * Takes the step {@link #advance()} left pending, asynchronously, and then
	 * every further one: the policies' decision through the limiter's
	 * asynchronous call, a cap's permit likewise.
	 * @return completes with {@link Step#PROCEED} or {@link Step#REFUSED}; fails with what is not a refusal
	 */
	public CompletionStage<Step> resume() {
		DecisionThreads threads = Objects.requireNonNull(this.threads, "Only a caller that must never block resumes");
		CompletionStage<Step> step;
		if (this.phase == POLICIES) {
			List<LimitRequest> calls = Objects.requireNonNull(this.calls);
			this.phase = CAPS;
			step = AsyncCalls.started(() -> this.limits.limiter.acquireAsync(calls, threads))
				.handle((outcome, failure) -> (failure != null) ? refuse(AsyncCalls.cause(failure)) : decided(outcome))
				.thenCompose(this::next);
		}
		else {
			this.phase = DECIDED;
			RoutePermits.Held held = held();
			step = permits().takeAsync(this.matched.caps(), this.context, this.disclosures, threads)
				.handle((taken, failure) -> {
					if (failure != null) {
						return refuse(AsyncCalls.cause(failure));
					}
					held.hold(taken);
					return Step.PROCEED;
				});
		}
		return step.whenComplete((ignored, failure) -> {
			if (failure != null) {
				// Not a refusal (those complete the step): ended as a failure, as advance() does.
				end(-1, true, false);
			}
		});
	}

	/** After an asynchronous step: the steps that follow, inline when they can be. */
	private CompletionStage<Step> next(Step step) {
		if (step == Step.REFUSED) {
			return CompletableFuture.completedFuture(step);
		}
		Step next = advance();
		return (next == Step.PENDING) ? resume() : CompletableFuture.completedFuture(next);
	}

	/**
	 * Returns why the call was refused.
	 * @return the refusal, once a step answered {@link Step#REFUSED}
	 */
	public RateLimitException refusal() {
		return Objects.requireNonNull(this.refusal, "Not refused");
	}

	/**
	 * Returns whether {@link #end} has anything to do: permits to give back or
	 * units to settle. A filter may skip watching for the end when not, once a
	 * step answered {@link Step#PROCEED} or {@link Step#REFUSED}.
	 * @return whether the end matters
	 */
	public boolean endMatters() {
		RateLimitOutcome outcome = this.outcome;
		return this.held != null || (outcome != null && !outcome.provisional().isEmpty());
	}

	/**
	 * Ends the call once its response is complete, failed or was cancelled:
	 * gives back the permits and settles the limits counted by outcome. Only
	 * the first end counts. For a caller that must never block, what may block
	 * (a store that only blocks) runs on its decision threads.
	 * @param status the response's status, or {@code -1} when it has none
	 * @param failed whether the request failed (an exception, an asynchronous error or timeout)
	 * @param cancelled whether its client went away before it was served
	 */
	public void end(int status, boolean failed, boolean cancelled) {
		if (!ENDED.compareAndSet(this, 0, 1)) {
			return;
		}
		int counted = (failed && status < 400) ? 500 : (status < 0) ? 200 : status;
		RoutePermits.@Nullable Held held = this.held;
		if (held != null) {
			// A cancelled call says nothing about the service; a failure or a server error is a drop.
			Permit.Ending ending = cancelled ? Permit.Ending.ABANDONED : RoutePermits.ending(counted, failed);
			if (offLoop(this.permitsMayBlock)) {
				Objects.requireNonNull(this.threads).execute(() -> held.release(ending));
			}
			else {
				held.release(ending);
			}
		}
		RateLimitOutcome outcome = this.outcome;
		if (outcome == null || outcome.provisional().isEmpty() || (cancelled && status < 0)) {
			// Nothing to settle; or given up before it had a status: its work may have run, so it keeps its units.
			return;
		}
		List<BoundPolicy> policies = this.matched.policies();
		if (offLoop(this.decisionMayBlock)) {
			Objects.requireNonNull(this.threads)
				.execute(() -> OutcomeSettlement.settle(policies, outcome, this.context, null, null, counted));
		}
		else {
			// Inline, nothing allocated: the servlet path.
			OutcomeSettlement.settle(policies, outcome, this.context, null, null, counted);
		}
	}

	/** Whether store work that may block goes to the decision threads: only for a caller that must not block. */
	private boolean offLoop(boolean mayBlock) {
		return this.threads != null && mayBlock;
	}

	/** The policies' decision: its header fields, and a refusal when it is one. */
	private Step decided(RateLimitOutcome outcome) {
		this.outcome = outcome;
		this.limits.headers.record(this.disclosures, this.exchange, WebExchange.FIELDS, outcome);
		return outcome.allowed() ? Step.PROCEED : refuse(new RateLimitExceededException(outcome));
	}

	private Step refuse(RuntimeException failure) {
		if (!(failure instanceof RateLimitException refusal)) {
			throw failure;
		}
		this.refusal = refusal;
		RateLimitOutcome allowed = this.outcome;
		if (allowed != null && allowed.allowed() && !allowed.provisional().isEmpty()) {
			// A cap refused after the policies allowed: nothing left to settle at the end.
			this.outcome = null;
			if (offLoop(this.decisionMayBlock)) {
				Objects.requireNonNull(this.threads).execute(() -> OutcomeSettlement.giveBackAll(allowed));
			}
			else {
				OutcomeSettlement.giveBackAll(allowed);
			}
		}
		return Step.REFUSED;
	}

	/** The limiter's requests for the matched policies; each disclosed one registered for the headers. */
	private List<LimitRequest> requests(List<BoundPolicy> policies) {
		if (policies.size() == 1) {
			LimitRequest call = request(policies.get(0));
			return (call != null) ? List.of(call) : List.of();
		}
		List<LimitRequest> calls = new ArrayList<>(policies.size());
		for (BoundPolicy bound : policies) {
			LimitRequest call = request(bound);
			if (call != null) {
				calls.add(call);
			}
		}
		return calls;
	}

	private @Nullable LimitRequest request(BoundPolicy bound) {
		RateLimitPolicy policy = bound.policy();
		// A route rule is enforced on the request itself: told to the caller when keyed by it.
		if (policy.visibility().disclosed(policy.key(), true)) {
			this.disclosures.add(policy.name());
		}
		return bound.toRequest(this.limits.expressions, this.context);
	}

	private RoutePermits permits() {
		return Objects.requireNonNull(this.limits.permits, "A route rule has a concurrency cap but no ConcurrencyLimiter");
	}

	private RoutePermits.Held held() {
		return Objects.requireNonNull(this.held);
	}

}
