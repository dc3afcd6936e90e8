package dev.ratelimit.aop;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;

import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.annotation.Around;
import org.aspectj.lang.annotation.Aspect;
import org.aspectj.lang.reflect.MethodSignature;

import org.springframework.aop.support.AopUtils;
import org.springframework.core.Ordered;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;

import dev.ratelimit.budget.Amounts;
import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.budget.OnError;
import dev.ratelimit.budget.Reservation;
import dev.ratelimit.core.InvalidCostException;
import dev.ratelimit.core.RateLimitException;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.key.RequestBinding;

/**
 * Enforces {@link dev.ratelimit.CostBudget}: reserves each budget's estimate
 * before the method runs (all of them, or none), and settles the reservations
 * to the actual cost when it returns, throws, or its
 * {@link CompletionStage} completes. A call that ends with one of the
 * limiter's own refusals (a nested rate limit, cap or budget) is released, not
 * charged: its work never ran.
 */
@Aspect
public class CostBudgetAspect implements Ordered {

	private static final Logger logger = System.getLogger(CostBudgetAspect.class.getName());

	private final CostBudgetMethods methods;

	private final KeyExpressions expressions;

	private final CostBudgets budgets;

	private final RequestBinding requests;

	private final int order;

	/**
	 * Creates the aspect.
	 * @param methods resolves annotated methods
	 * @param expressions evaluates keys and amounts
	 * @param budgets reserves and settles
	 * @param requests the web request binding
	 * @param order the aspect's order; lower runs first
	 */
	public CostBudgetAspect(CostBudgetMethods methods, KeyExpressions expressions, CostBudgets budgets,
			RequestBinding requests, int order) {
		this.methods = methods;
		this.expressions = expressions;
		this.budgets = budgets;
		this.requests = requests;
		this.order = order;
	}

	/**
	 * Reserves, runs the method, settles.
	 * @param joinPoint the invocation
	 * @return the method's result
	 * @throws Throwable what the method throws, or a budget exception before it runs
	 */
	@Around("@annotation(dev.ratelimit.CostBudget) || @annotation(dev.ratelimit.CostBudget.List)")
	public Object charge(ProceedingJoinPoint joinPoint) throws Throwable {
		MethodSignature signature = (MethodSignature) joinPoint.getSignature();
		CostBudgetMethods.BudgetedMethod budgeted = this.methods.resolve(signature.getMethod(),
				AopUtils.getTargetClass(joinPoint.getTarget()));
		EvaluationContext context = this.expressions.context(this.requests.current(), budgeted.method(),
				joinPoint.getArgs());
		List<Reservation> reservations = reserveAll(budgeted.budgets(), context, budgeted.method());
		Object result;
		try {
			result = joinPoint.proceed();
		}
		catch (Throwable ex) {
			settleAll(budgeted.budgets(), reservations, context, null, ex);
			throw ex;
		}
		if (result instanceof CompletionStage<?> stage) {
			return stage.whenComplete((value, error) -> settleAll(budgeted.budgets(), reservations, context, value,
					error));
		}
		settleAll(budgeted.budgets(), reservations, context, result, null);
		return result;
	}

	private List<Reservation> reserveAll(List<BoundBudget> bound, EvaluationContext context, Method method) {
		List<Reservation> reservations = new ArrayList<>(bound.size());
		for (BoundBudget budget : bound) {
			this.requests.applying(budget.policy().name(), budget.policy().visibility(),
					budget.key().getExpressionString(), method);
		}
		try {
			for (BoundBudget budget : bound) {
				long estimate = amount(budget, budget.estimate(), context, "estimate");
				Reservation reservation = this.budgets.reserve(budget.policy(),
						this.expressions.key(budget.key(), context), estimate);
				reservations.add(reservation);
				record(budget, reservation.decision());
			}
		}
		catch (RuntimeException ex) {
			// All or nothing: a later budget's refusal returns what earlier ones reserved.
			reservations.forEach(Reservation::release);
			throw ex;
		}
		return reservations;
	}

	private void settleAll(List<BoundBudget> bound, List<Reservation> reservations, EvaluationContext context,
			Object result, Throwable failure) {
		if (refusedByLimiter(failure)) {
			// Our own refusal, before the work ran: nothing was spent, whatever on-error says.
			for (int i = 0; i < reservations.size(); i++) {
				record(bound.get(i), reservations.get(i).release());
			}
			return;
		}
		context.setVariable("result", result);
		context.setVariable("exception", failure);
		for (int i = 0; i < reservations.size(); i++) {
			BoundBudget budget = bound.get(i);
			Reservation reservation = reservations.get(i);
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
	 * Returns whether the work ended with one of the limiter's own refusals: a
	 * rate limit, concurrency cap or budget nested inside the budgeted call (on a
	 * service it calls, or inner advice on the same method) refused it, or could
	 * not decide, before the work it guards ran. The on-error rule is for failures
	 * of the work itself; a refusal incurred no cost, and charging it would let a
	 * limit shared by all callers burn every caller's budget.
	 */
	private static boolean refusedByLimiter(Throwable failure) {
		Throwable cause = failure;
		// A CompletionStage fails with the work's exception wrapped.
		while ((cause instanceof CompletionException || cause instanceof ExecutionException)
				&& cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause instanceof RateLimitException;
	}

	/**
	 * The actual cost, or {@code null} when it is not configured or cannot be
	 * computed (after a failure, for example), in which case the estimate or the
	 * on-error rule applies.
	 */
	private Long actual(BoundBudget budget, EvaluationContext context, Throwable failure) {
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
		catch (EvaluationException ex) {
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

	private void record(BoundBudget budget, BudgetDecision decision) {
		if (decision != null) {
			this.requests.recordBudget(budget.policy(), decision);
		}
	}

	@Override
	public int getOrder() {
		return this.order;
	}

}
