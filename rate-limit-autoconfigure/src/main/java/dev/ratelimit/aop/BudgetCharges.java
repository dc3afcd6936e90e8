package dev.ratelimit.aop;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import org.jspecify.annotations.Nullable;

import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;

import dev.ratelimit.budget.Amounts;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.BudgetMeter;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.budget.OnError;
import dev.ratelimit.budget.Reservation;
import dev.ratelimit.core.AsyncCalls;
import dev.ratelimit.core.InvalidCostException;
import dev.ratelimit.core.RateLimitException;
import dev.ratelimit.key.AppliedLimit;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.key.RequestBinding;

/**
 * The budgets of one annotated method: reserving each estimate before the
 * call (all, or none) and settling each reservation to the actual cost after
 * it.
 * <p>
 * Settling follows one rule per outcome. A call that ended with one of the
 * limiter's own refusals before any limited work ran in it (see
 * {@link WorkScope}) spent nothing: its reservations are released, whatever
 * {@code on-error} says, so that a limit shared by all callers cannot burn
 * every caller's budget with refusals. Otherwise the {@code actual} expression
 * is evaluated over {@code #result} (and {@code #exception}); when it yields
 * nothing, a failed call follows {@code on-error} and a successful one is
 * charged its estimate. A call that reported its usage through its
 * {@link BudgetMeter} (a stream) is charged that usage instead, see
 * {@link #meteredCost}.
 */
final class BudgetCharges {

	private static final Logger logger = System.getLogger(BudgetCharges.class.getName());

	private final KeyExpressions expressions;

	private final @Nullable CostBudgets budgets;

	private final RequestBinding requests;

	BudgetCharges(KeyExpressions expressions, @Nullable CostBudgets budgets, RequestBinding requests) {
		this.expressions = expressions;
		this.budgets = budgets;
		this.requests = requests;
	}

	/**
	 * Reserves every budget's estimate, all or nothing, each against the
	 * variant (key override or plan) that applies to the call.
	 * @return the reservations, in the budgets' order; {@code null} for a budget the call is exempt from
	 */
	List<Reservation> reserve(List<BoundBudget> bound, EvaluationContext context) {
		if (bound.isEmpty()) {
			return List.of();
		}
		List<Reservation> reservations = new ArrayList<>(bound.size());
		try {
			for (BoundBudget budget : bound) {
				AppliedLimit.Resolved<BudgetPolicy> call = budget.applied().resolve(context);
				if (call == null) {
					// Index for index with the budgets: an exempt call reserves nothing against this one.
					reservations.add(null);
					continue;
				}
				long estimate = amount(budget, budget.estimate(), context, "estimate");
				reserved(budget, reservations, budgets().reserve(call.limit(), call.key(), estimate));
			}
		}
		catch (RuntimeException ex) {
			releaseTaken(reservations);
			throw ex;
		}
		return reservations;
	}

	/**
	 * Reserves every budget's estimate like {@link #reserve}, one after another,
	 * without making the calling thread wait (see {@link CostBudgets#reserveAsync}).
	 * @param blocking runs a store call that can only block
	 * @param inRequest runs each step after a reservation with the call's request bound
	 * @param undo runs the releases of a refused call, before the refusal goes on
	 * @return the reservations, in the budgets' order; {@code null} for a budget the call is exempt from
	 */
	CompletionStage<List<Reservation>> reserveAsync(List<BoundBudget> bound, EvaluationContext context,
			Executor blocking, Executor inRequest, Undo undo) {
		if (bound.isEmpty()) {
			return CompletableFuture.completedFuture(List.of());
		}
		List<Reservation> reservations = new ArrayList<>(bound.size());
		CompletionStage<Void> done = CompletableFuture.completedFuture(null);
		for (BoundBudget budget : bound) {
			done = done.thenComposeAsync((ignored) -> {
				AppliedLimit.Resolved<BudgetPolicy> call = budget.applied().resolve(context);
				if (call == null) {
					reservations.add(null);
					return CompletableFuture.completedFuture(null);
				}
				long estimate = amount(budget, budget.estimate(), context, "estimate");
				return budgets().reserveAsync(call.limit(), call.key(), estimate, blocking)
					.thenAcceptAsync((reservation) -> reserved(budget, reservations, reservation), inRequest);
			}, inRequest);
		}
		return done.handle((ignored, failure) -> (failure == null)
				? CompletableFuture.<List<Reservation>>completedFuture(reservations)
				: reservations.stream().allMatch(Objects::isNull)
						? CompletableFuture.<List<Reservation>>failedFuture(failure)
						: undo.<List<Reservation>>then(() -> releaseTaken(reservations), failure))
			.thenCompose((stage) -> stage);
	}

	private void reserved(BoundBudget budget, List<Reservation> reservations, Reservation reservation) {
		reservations.add(reservation);
		record(budget, reservation.decision());
	}

	/** All or nothing: a later budget's refusal returns what earlier ones reserved. */
	private static void releaseTaken(List<Reservation> reservations) {
		for (Reservation reservation : reservations) {
			if (reservation != null) {
				reservation.release();
			}
		}
	}

	/**
	 * Releases every reservation: the call was refused before its work ran.
	 */
	void release(List<BoundBudget> bound, List<Reservation> reservations) {
		for (int i = 0; i < reservations.size(); i++) {
			if (reservations.get(i) != null) {
				record(bound.get(i), reservations.get(i).release());
			}
		}
	}

	/**
	 * Settles every reservation once the call's work has ended.
	 * @param workRan whether limited work may have run inside the call, which
	 * makes a refusal of ours a failure like any other
	 */
	void settle(List<BoundBudget> bound, List<Reservation> reservations, @Nullable BudgetMeter meter,
			EvaluationContext context, @Nullable Object result, @Nullable Throwable failure, boolean workRan) {
		if (reservations.isEmpty()) {
			return;
		}
		boolean metered = meter != null && meter.reported();
		if (failure instanceof RateLimitException && !workRan && !metered) {
			release(bound, reservations);
			return;
		}
		context.setVariable("result", result);
		context.setVariable("exception", failure);
		for (int i = 0; i < reservations.size(); i++) {
			BoundBudget budget = bound.get(i);
			Reservation reservation = reservations.get(i);
			if (reservation == null) {
				continue;
			}
			if (metered && meter != null) {
				record(budget, reservation.settle(meteredCost(budget, reservation, meter.usedMicros(i), context,
						failure)));
				continue;
			}
			Long actual = actual(budget, context, failure);
			BudgetDecision decision;
			if (actual != null) {
				decision = reservation.settle(actual);
			}
			else if (failure != null && budget.policy().onError() == OnError.RELEASE) {
				decision = reservation.release();
			}
			else {
				decision = reservation.settle(reservation.estimateMicros());
			}
			record(budget, decision);
		}
	}

	/**
	 * The cost of a call that reported its usage: that usage when it completed,
	 * was stopped at its reservation, or lost its client (timed out, cancelled);
	 * when it failed, at least that usage — the provider was paid for it — and
	 * otherwise the actual cost or the on-error rule.
	 */
	private long meteredCost(BoundBudget budget, Reservation reservation, long used, EvaluationContext context,
			@Nullable Throwable failure) {
		if (failure == null || Completions.clientGone(failure)) {
			return used;
		}
		Long actual = actual(budget, context, failure);
		if (actual != null) {
			return Math.max(actual, used);
		}
		return (budget.policy().onError() == OnError.RELEASE) ? used : Math.max(used, reservation.reservedMicros());
	}

	/**
	 * The actual cost, or {@code null} when it is not configured or cannot be
	 * computed (after a failure, for example), in which case the estimate or the
	 * on-error rule applies.
	 */
	private @Nullable Long actual(BoundBudget budget, EvaluationContext context, @Nullable Throwable failure) {
		if (budget.actual() == null) {
			return null;
		}
		try {
			return amount(budget, budget.actual(), context, "actual");
		}
		catch (InvalidCostException ex) {
			if (failure == null) {
				logger.log(Level.WARNING, "Actual cost of budget '" + budget.policy().name()
						+ "' could not be computed; charging the estimate: " + ex.getMessage());
			}
			return null;
		}
	}

	private long amount(BoundBudget budget, Expression expression, EvaluationContext context, String what) {
		Object value;
		try {
			value = expression.getValue(context);
		}
		catch (RuntimeException ex) {
			// What a bean method throws too (SpEL rethrows it as it is): an estimate that fails is the caller's bad
			// request, an actual cost that fails charges the estimate, never a 500 or a reservation left open.
			throw new InvalidCostException(budget.policy().name(), "The " + what + " of budget '"
					+ budget.policy().name() + "' (" + expression.getExpressionString() + ") could not be evaluated: "
					+ ex.getMessage());
		}
		try {
			return Amounts.toMicrosRoundingUp(value);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidCostException(budget.policy().name(),
					"The " + what + " of budget '" + budget.policy().name() + "' is invalid: " + ex.getMessage());
		}
	}

	private void record(BoundBudget budget, @Nullable BudgetDecision decision) {
		if (decision != null) {
			this.requests.recordBudget(budget.policy(), decision);
		}
	}

	/**
	 * Undoes what a refused call took (a give-back, a release), where that may
	 * block, before the refusal goes on.
	 */
	@FunctionalInterface
	interface Undo {

		/**
		 * Runs an undo step, then fails with the refusal.
		 * @param step the step
		 * @param refusal why the call is refused
		 * @param <T> the type of the stage it stands in for
		 * @return a stage failed with the refusal, once the step ran
		 */
		<T> CompletionStage<T> then(Runnable step, Throwable refusal);

	}

	/** @return whether reserving or settling a budget may block the calling thread */
	boolean mayBlock() {
		return this.budgets != null && this.budgets.mayBlock();
	}

	/** The budgets' store: a method is bound to a budget only when budgets are configured, and then there is one. */
	private CostBudgets budgets() {
		return Objects.requireNonNull(this.budgets, "budgets are configured");
	}

}
