package dev.ratelimit.aop;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.expression.EvaluationContext;

import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;
import dev.ratelimit.budget.BudgetMeter;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.budget.Reservation;
import dev.ratelimit.concurrency.ConcurrencyLimiter;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.core.AsyncCalls;
import dev.ratelimit.core.DecisionThreads;
import dev.ratelimit.core.LimitListener;
import dev.ratelimit.core.LimitRequest;
import dev.ratelimit.core.RateLimitException;
import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.core.RateLimitOutcome;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.key.BoundPolicy;
import dev.ratelimit.key.AppliedLimit;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.key.OutcomeSettlement;
import dev.ratelimit.key.RequestBinding;

/**
 * Enforces {@link RateLimited}, {@link CostBudget} and {@link Concurrency} on
 * Spring bean methods (those {@link LimitPointcut} matches): one advice for the three kinds, with one
 * evaluation context per call. Around each call, in this order:
 * <ol>
 * <li>the rate limits decide (all or nothing), and a refusal throws
 * {@link RateLimitExceededException} before anything else is taken;</li>
 * <li>the budgets reserve their estimates (all or nothing);</li>
 * <li>the concurrency cap hands out a permit, waiting up to its max-wait; a
 * refusal releases the reservations;</li>
 * <li>the method runs, with its call's {@link BudgetMeter} current, for a
 * stream to report its usage;</li>
 * <li>when its work ends — at once, or later for an asynchronous or streaming
 * result (see {@link Completions}) — the permit is released, the budgets
 * settled and the rate limits counted by outcome ({@code countWhen}) settled,
 * exactly once; a call refused before it ran gives back what it took.</li>
 * </ol>
 * A refusal in the first three steps ({@link RateLimitException}, of any kind)
 * leaves nothing taken; when the method names a fallback, it is called on the
 * target instead of throwing (see {@link FallbackMethod}). Refusals thrown by
 * the method itself, including those of limited methods it calls, are its own
 * outcome and are thrown.
 * Each limit is registered with the web request first, so that responses name
 * only the limits the caller may see.
 * <p>
 * A call the {@link RequestBinding} defers (a method returning {@code Mono} or
 * {@code Flux} in a WebFlux application) takes the same steps without making
 * its thread wait: each decision is a stage (see
 * {@link RateLimiter#acquireAsync}, {@link CostBudgets#reserveAsync},
 * {@link ConcurrencyLimiter#acquireAsync}), a turn in wait mode is a timer, and
 * the method is called on the thread the last decision completed on. What each
 * step does before and after its decision is written once for both.
 */
public final class LimitInterceptor implements MethodInterceptor {

	private static final RateLimitOutcome NOTHING_DECIDED = new RateLimitOutcome(List.of());

	private final LimitAnnotations annotations;

	private final KeyExpressions expressions;

	private final RateLimiter limiter;

	private final BudgetCharges budgets;

	private final ConcurrencyLimiter concurrency;

	private final RequestBinding requests;

	private final LimitListener listener;

	/**
	 * Creates the interceptor.
	 * @param annotations resolves annotated methods
	 * @param expressions evaluates keys, costs and amounts
	 * @param limiter decides rate limits
	 * @param budgets reserves and settles budgets; {@code null} when no budget is configured
	 * @param concurrency hands out permits
	 * @param requests the web request binding, {@link RequestBinding#NONE} outside web applications
	 */
	public LimitInterceptor(LimitAnnotations annotations, KeyExpressions expressions, RateLimiter limiter,
			@Nullable CostBudgets budgets, ConcurrencyLimiter concurrency, RequestBinding requests) {
		this(annotations, expressions, limiter, budgets, concurrency, requests, LimitListener.NONE);
	}

	/**
	 * Creates the interceptor.
	 * @param annotations resolves annotated methods
	 * @param expressions evaluates keys, costs and amounts
	 * @param limiter decides rate limits
	 * @param budgets reserves and settles budgets; {@code null} when no budget is configured
	 * @param concurrency hands out permits
	 * @param requests the web request binding, {@link RequestBinding#NONE} outside web applications
	 * @param listener hears the fallback methods called
	 */
	public LimitInterceptor(LimitAnnotations annotations, KeyExpressions expressions, RateLimiter limiter,
			@Nullable CostBudgets budgets, ConcurrencyLimiter concurrency, RequestBinding requests, LimitListener listener) {
		this.annotations = annotations;
		this.expressions = expressions;
		this.limiter = limiter;
		this.budgets = new BudgetCharges(expressions, budgets, requests);
		this.concurrency = concurrency;
		this.requests = requests;
		this.listener = listener;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = Objects.requireNonNull(invocation.getThis(), "a limited method has a target");
		MethodLimits limits = this.annotations.resolve(invocation.getMethod(), AopUtils.getTargetClass(target));
		if (limits.isEmpty()) {
			return invocation.proceed();
		}
		if (!this.requests.defers(limits.method())) {
			return invoke(invocation, limits, false);
		}
		boolean mayBlock = mayBlock(limits);
		return this.requests.call(limits.method(),
				(threads, inRequest) -> invokeAsync(invocation, limits, mayBlock, threads, inRequest));
	}

	/**
	 * Returns whether a method has limits, and whether deciding them may block
	 * the calling thread: what a caller that must never block needs to know
	 * before it calls a limited method that is not deferred (a plain handler
	 * method on an event loop).
	 * @param method the method
	 * @param targetClass the class of the bean it is called on
	 * @return {@code null} when the method has no limits; else whether deciding them may block
	 */
	public @Nullable Boolean mayBlock(Method method, Class<?> targetClass) {
		MethodLimits limits = this.annotations.resolve(method, targetClass);
		return limits.isEmpty() ? null : mayBlock(limits);
	}

	/**
	 * Returns whether deciding a method's limits may block the calling thread,
	 * for any of the three kinds: a store that waits on I/O, or a limit that
	 * waits for its turn; then settling them may block too.
	 */
	private boolean mayBlock(MethodLimits limits) {
		BoundCap cap = limits.cap();
		return (!limits.rateLimits().isEmpty() && this.limiter.mayBlock(ratePolicies(limits)))
				|| (!limits.budgets().isEmpty() && this.budgets.mayBlock())
				|| (cap != null && this.concurrency.mayBlock(cap.policy()));
	}

	private static List<RateLimitPolicy> ratePolicies(MethodLimits limits) {
		List<RateLimitPolicy> policies = new ArrayList<>(limits.rateLimits().size());
		for (BoundPolicy bound : limits.rateLimits()) {
			policies.add(bound.policy());
		}
		return policies;
	}

	/**
	 * Decides a method's limits, calls it, and settles them when it is done.
	 * @param mayBlock whether settling may block, for a call whose end may come
	 * on a thread that must not (see {@link RequestBinding#finishing})
	 */
	private @Nullable Object invoke(MethodInvocation invocation, MethodLimits limits, boolean mayBlock)
			throws Throwable {
		EvaluationContext context = this.expressions.context(this.requests.current(), limits.method(),
				invocation.getArguments());
		RateLimitOutcome taken = null;
		List<Reservation> reservations;
		Permit permit;
		try {
			taken = limits.rateLimits().isEmpty() ? NOTHING_DECIDED
					: admitted(this.limiter.acquire(rateLimitCalls(limits, context)));
			applyingBudgets(limits);
			reservations = this.budgets.reserve(limits.budgets(), context);
			permit = acquirePermit(limits, reservations, context);
		}
		catch (RuntimeException ex) {
			if (taken != null) {
				// Refused before the work ran: no outcome to count.
				OutcomeSettlement.giveBackAll(taken);
			}
			return refused(invocation, limits, ex);
		}
		return proceed(invocation, limits, context, taken, reservations, permit, mayBlock);
	}

	/**
	 * {@link #invoke(MethodInvocation, MethodLimits, boolean)} without making the
	 * calling thread wait: the same steps, each decision a stage, each step after
	 * one run with the request bound ({@code inRequest}), and what a refused call
	 * gives back or releases undone before the refusal goes on, on {@code threads}
	 * when that may block.
	 */
	private CompletionStage<Object> invokeAsync(MethodInvocation invocation, MethodLimits limits, boolean mayBlock,
			DecisionThreads threads, Executor inRequest) {
		EvaluationContext context = this.expressions.context(this.requests.current(), limits.method(),
				invocation.getArguments());
		BudgetCharges.Undo undo = undo(mayBlock, threads, inRequest);
		Held held = new Held();
		CompletionStage<Held> decided = AsyncCalls.started(() -> limits.rateLimits().isEmpty()
				? CompletableFuture.completedFuture(NOTHING_DECIDED)
				: this.limiter.acquireAsync(rateLimitCalls(limits, context), threads)
					.thenApplyAsync(this::admitted, inRequest))
			.thenComposeAsync((taken) -> {
				held.taken = taken;
				applyingBudgets(limits);
				return this.budgets.reserveAsync(limits.budgets(), context, threads, inRequest, undo);
			}, inRequest)
			.thenComposeAsync((reservations) -> {
				held.reservations = reservations;
				return acquirePermitAsync(limits, reservations, context, threads, inRequest, undo);
			}, inRequest)
			.thenApply((permit) -> {
				held.permit = permit;
				return held;
			});
		return decided.handle((done, failure) -> (failure == null) ? CompletableFuture.completedFuture(done)
				: givenBack(held.taken, undo, failure))
			.thenCompose((stage) -> stage)
			.handleAsync((done, failure) -> {
				try {
					return (failure == null)
							? proceed(invocation, limits, context, Objects.requireNonNull(done.taken, "decided"),
									Objects.requireNonNull(done.reservations, "reserved"), done.permit, mayBlock)
							: refused(invocation, limits, AsyncCalls.cause(failure));
				}
				catch (RuntimeException | Error ex) {
					throw ex;
				}
				catch (Throwable ex) {
					throw new CompletionException(ex);
				}
			}, inRequest);
	}

	/** Refused before the work ran: no outcome to count, what the rate limits took is given back first. */
	private static CompletionStage<Held> givenBack(@Nullable RateLimitOutcome taken, BudgetCharges.Undo undo,
			Throwable refusal) {
		return (taken == null || taken.provisional().isEmpty()) ? CompletableFuture.failedFuture(refusal)
				: undo.then(() -> OutcomeSettlement.giveBackAll(taken), refusal);
	}

	/**
	 * Runs a refused call's undo step before its refusal goes on: inline when
	 * the stores cannot block, else on {@code threads}; with the request bound,
	 * since a release records the budget's state for the response.
	 */
	private static BudgetCharges.Undo undo(boolean mayBlock, DecisionThreads threads, Executor inRequest) {
		return new BudgetCharges.Undo() {

			@Override
			public <T> CompletionStage<T> then(Runnable step, Throwable refusal) {
				Runnable bound = () -> inRequest.execute(step);
				CompletableFuture<T> refused = new CompletableFuture<>();
				AsyncCalls.call(mayBlock, threads, () -> {
					bound.run();
					return null;
				}).whenComplete((ignored, failure) -> refused.completeExceptionally(refusal));
				return refused;
			}

		};
	}

	/** What a deferred call's decisions took, for the method's call and settling. */
	private static final class Held {

		@Nullable RateLimitOutcome taken;

		@Nullable List<Reservation> reservations;

		@Nullable Permit permit;

	}

	/**
	 * A call refused before its work ran, nothing held any more: its fallback
	 * method's result, when it names one that takes the refusal; else the refusal.
	 */
	private @Nullable Object refused(MethodInvocation invocation, MethodLimits limits, RuntimeException ex)
			throws Throwable {
		FallbackMethod fallback = limits.fallback();
		if (!(ex instanceof RateLimitException refusal) || fallback == null || !fallback.takes(refusal)) {
			throw ex;
		}
		this.listener.fallbackCalled(limits.method(), refusal);
		// Nothing is held any more: the fallback runs outside the limits.
		return fallback.call(invocation.getThis(), invocation.getArguments(), refusal);
	}

	/**
	 * Calls the method with its limits decided, and settles them when its work
	 * ends, at once or later (see {@link Completions}).
	 */
	private @Nullable Object proceed(MethodInvocation invocation, MethodLimits limits, EvaluationContext context,
			RateLimitOutcome decided, List<Reservation> reservations, @Nullable Permit permit, boolean mayBlock)
			throws Throwable {
		Object result;
		WorkScope.workStarts();
		WorkScope scope = reservations.isEmpty() ? null : WorkScope.open();
		// Bound for the method's body only: the method hands it to the thread that writes its stream.
		BudgetMeter meter = reservations.isEmpty() ? null : new BudgetMeter(reservations);
		BudgetMeter.Scope metering = (meter != null) ? BudgetMeter.bind(meter) : null;
		try {
			result = invocation.proceed();
		}
		catch (Throwable ex) {
			closeScopes(scope, metering);
			finish(limits, decided, reservations, meter, permit, context, null, ex, scope == null || scope.workRan());
			throw ex;
		}
		closeScopes(scope, metering);
		boolean workRan = scope == null || scope.workRan();
		Completions.Finish end = (value, failure, later) -> finish(limits, decided, reservations, meter, permit,
				context, value, failure, later || workRan);
		// Wherever the call ends, its end sees its request: a settled budget answers in its response. A servlet
		// request ends on its own thread: nothing to bind, nothing more to allocate.
		Executor inRequest = this.requests.endingInRequest();
		Completions.Finish ending = (inRequest == null) ? end
				: (value, failure, later) -> inRequest.execute(() -> end.finished(value, failure, later));
		if (!mayBlock) {
			// Settled on whatever thread ends the call, as ever: no hand-over to allocate.
			return Completions.whenDone(result, ending, this.requests.isHandler(limits.method()));
		}
		return Completions.whenDone(this.requests.ending(result, true),
				(value, failure, later) -> this.requests.finishing(true, () -> ending.finished(value, failure, later)),
				this.requests.isHandler(limits.method()));
	}

	/** The rate limits' requests for this call, each registered with the web request first. */
	private List<LimitRequest> rateLimitCalls(MethodLimits limits, EvaluationContext context) {
		List<LimitRequest> calls = new ArrayList<>(limits.rateLimits().size());
		for (BoundPolicy bound : limits.rateLimits()) {
			RateLimitPolicy policy = bound.policy();
			this.requests.applying(policy.name(), policy.visibility(), policy.key(), limits.method());
			LimitRequest call = bound.toRequest(this.expressions, context);
			if (call != null) {
				calls.add(call);
			}
		}
		return calls;
	}

	/** Records the rate limits' outcome for the response, and refuses the call when they deny it. */
	private RateLimitOutcome admitted(RateLimitOutcome outcome) {
		this.requests.record(outcome);
		if (!outcome.allowed()) {
			throw new RateLimitExceededException(outcome);
		}
		return outcome;
	}

	private void applyingBudgets(MethodLimits limits) {
		for (BoundBudget budget : limits.budgets()) {
			this.requests.applying(budget.policy().name(), budget.policy().visibility(),
					budget.key().getExpressionString(), limits.method());
		}
	}

	private @Nullable Permit acquirePermit(MethodLimits limits, List<Reservation> reservations,
			EvaluationContext context) {
		try {
			AppliedLimit.Resolved<ConcurrencyPolicy> call = capCall(limits, context);
			return (call != null) ? this.concurrency.acquire(call.limit(), call.key()) : null;
		}
		catch (RuntimeException ex) {
			// Refused by the cap before the work ran: nothing was spent.
			this.budgets.release(limits.budgets(), reservations);
			throw ex;
		}
	}

	private CompletionStage<Permit> acquirePermitAsync(MethodLimits limits, List<Reservation> reservations,
			EvaluationContext context, DecisionThreads threads, Executor inRequest, BudgetCharges.Undo undo) {
		AppliedLimit.Resolved<ConcurrencyPolicy> call;
		try {
			call = capCall(limits, context);
		}
		catch (RuntimeException ex) {
			return released(limits, reservations, undo, ex);
		}
		if (call == null) {
			return CompletableFuture.completedFuture(null);
		}
		return AsyncCalls.started(() -> this.concurrency.acquireAsync(call.limit(), call.key(), threads))
			.handle((permit, failure) -> (failure == null) ? CompletableFuture.completedFuture(permit)
					: this.<Permit>released(limits, reservations, undo, failure))
			.thenCompose((stage) -> stage);
	}

	/** Refused by the cap before the work ran: nothing was spent, the reservations are released first. */
	private <T> CompletionStage<T> released(MethodLimits limits, List<Reservation> reservations,
			BudgetCharges.Undo undo, Throwable refusal) {
		return reservations.isEmpty() ? CompletableFuture.failedFuture(refusal)
				: undo.then(() -> this.budgets.release(limits.budgets(), reservations), refusal);
	}

	/** The cap's call, registered with the web request first; {@code null} without a cap or for an exempt call. */
	private AppliedLimit.@Nullable Resolved<ConcurrencyPolicy> capCall(MethodLimits limits,
			EvaluationContext context) {
		BoundCap cap = limits.cap();
		if (cap == null) {
			return null;
		}
		ConcurrencyPolicy policy = cap.policy();
		this.requests.applying(policy.name(), policy.visibility(), policy.key(), limits.method());
		return cap.applied().resolve(context);
	}

	private void finish(MethodLimits limits, RateLimitOutcome decided, List<Reservation> reservations,
			@Nullable BudgetMeter meter, @Nullable Permit permit, EvaluationContext context, @Nullable Object value,
			@Nullable Throwable failure, boolean workRan) {
		try {
			if (permit != null) {
				permit.release(ending(failure, workRan));
			}
		}
		finally {
			try {
				this.budgets.settle(limits.budgets(), reservations, meter, context, value, failure, workRan);
			}
			finally {
				settleRateLimits(limits, decided, context, value, failure, workRan);
			}
		}
	}

	/**
	 * How a call ended, for an adaptive cap's estimate: a call that lost its
	 * client, or that one of our own refusals ended before any work ran, says
	 * nothing about the service; any other failure (a timeout among them) is a
	 * drop.
	 */
	private static Permit.Ending ending(@Nullable Throwable failure, boolean workRan) {
		if (failure == null) {
			return Permit.Ending.SUCCEEDED;
		}
		if ((failure instanceof Completions.WorkAbandonedException abandoned && !abandoned.timedOut())
				|| (failure instanceof RateLimitException && !workRan)) {
			return Permit.Ending.ABANDONED;
		}
		return Permit.Ending.FAILED;
	}

	/**
	 * Settles the rate limits counted by outcome, by the rule budgets follow: a
	 * call ended by one of our own refusals before any limited work ran in it has
	 * no outcome to count, so its units are given back.
	 */
	private static void settleRateLimits(MethodLimits limits, RateLimitOutcome decided, EvaluationContext context,
			@Nullable Object value, @Nullable Throwable failure, boolean workRan) {
		if (failure instanceof RateLimitException && !workRan) {
			OutcomeSettlement.giveBackAll(decided);
			return;
		}
		OutcomeSettlement.settle(limits.rateLimits(), decided, context, value, failure, null);
	}

	private static void closeScopes(@Nullable WorkScope scope, BudgetMeter.@Nullable Scope metering) {
		if (metering != null) {
			metering.close();
		}
		if (scope != null) {
			scope.close();
		}
	}

}
