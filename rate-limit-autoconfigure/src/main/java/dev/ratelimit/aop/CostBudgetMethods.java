package dev.ratelimit.aop;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;

import org.springframework.aop.support.AopUtils;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;

import dev.ratelimit.CostBudget;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.core.RateLimitConfigurationException;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.core.NamedLimits;

/**
 * Resolves the {@link CostBudget} annotations of a method into budgets with
 * parsed expressions, once per method. Every error names the method.
 */
public final class CostBudgetMethods {

	private final NamedLimits<BudgetPolicy> budgets;

	private final KeyExpressions expressions;

	private final UnaryOperator<String> placeholders;

	private final Map<MethodClassKey, BudgetedMethod> cache = new ConcurrentHashMap<>();

	/**
	 * Creates a resolver.
	 * @param budgets the configured budgets
	 * @param expressions the expression parser
	 * @param placeholders resolves {@code ${...}} in attribute values
	 */
	public CostBudgetMethods(NamedLimits<BudgetPolicy> budgets, KeyExpressions expressions, UnaryOperator<String> placeholders) {
		this.budgets = budgets;
		this.expressions = expressions;
		this.placeholders = placeholders;
	}

	/**
	 * Returns whether a method carries {@link CostBudget}.
	 * @param method the method
	 * @return whether it is budgeted
	 */
	public static boolean isBudgeted(Method method) {
		return !AnnotatedElementUtils.findMergedRepeatableAnnotations(method, CostBudget.class).isEmpty();
	}

	/**
	 * Returns the resolved budgets of a method.
	 * @param method the invoked method
	 * @param targetClass the class of the target bean
	 * @return the method with its budgets
	 */
	public BudgetedMethod resolve(Method method, Class<?> targetClass) {
		MethodClassKey cacheKey = new MethodClassKey(method, targetClass);
		BudgetedMethod budgeted = this.cache.get(cacheKey);
		if (budgeted == null) {
			budgeted = this.cache.computeIfAbsent(cacheKey, (k) -> doResolve(method, targetClass));
		}
		return budgeted;
	}

	private BudgetedMethod doResolve(Method method, Class<?> targetClass) {
		Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
		Set<CostBudget> annotations = AnnotatedElementUtils.findMergedRepeatableAnnotations(specific,
				CostBudget.class);
		List<BoundBudget> bound = new ArrayList<>(annotations.size());
		for (CostBudget annotation : annotations) {
			bound.add(bind(annotation, specific));
		}
		return new BudgetedMethod(specific, List.copyOf(bound));
	}

	private BoundBudget bind(CostBudget annotation, Method method) {
		String where = RateLimitedMethods.describe(method);
		String name = resolve(annotation.policy(), "value", where);
		if (name.isEmpty()) {
			throw new RateLimitConfigurationException(where + " is annotated @CostBudget without a budget name",
					"Name a budget configured under rate-limit.budgets, e.g. @CostBudget(value = \"tenant-daily\", "
							+ "estimate = \"0.10\").",
					null);
		}
		BudgetPolicy policy = this.budgets.find(name)
			.orElseThrow(() -> new RateLimitConfigurationException(
					where + " is annotated @CostBudget(\"" + name + "\") but no budget named '" + name
							+ "' is configured (configured: " + this.budgets.names() + ")",
					"Add rate-limit.budgets." + name + " to the configuration or correct the name.", null));
		String key = resolve(annotation.key(), "key", where);
		String estimate = resolve(annotation.estimate(), "estimate", where);
		if (estimate.isEmpty()) {
			throw new RateLimitConfigurationException(where + ": @CostBudget(\"" + name + "\") has no estimate",
					"Give the amount to reserve before the call, e.g. estimate = \"#request.maxTokens * 0.000002\".",
					null);
		}
		String actual = resolve(annotation.actual(), "actual", where);
		return new BoundBudget(policy, parse(key.isEmpty() ? policy.key() : key, "key", where),
				parse(estimate, "estimate", where), actual.isEmpty() ? null : parse(actual, "actual", where));
	}

	private Expression parse(String text, String attribute, String where) {
		try {
			return this.expressions.parse(text);
		}
		catch (ParseException ex) {
			throw new RateLimitConfigurationException(where + ": @CostBudget " + attribute + " expression '" + text
					+ "' cannot be parsed: " + ex.getMessage(), "Correct the SpEL expression.", ex);
		}
	}

	private String resolve(String value, String attribute, String where) {
		try {
			return this.placeholders.apply(value).strip();
		}
		catch (IllegalArgumentException ex) {
			throw new RateLimitConfigurationException(
					where + ": @CostBudget " + attribute + " '" + value + "' has an unresolvable placeholder",
					"Define the property it refers to or give the placeholder a default.", ex);
		}
	}

	/**
	 * The budgets of one method.
	 *
	 * @param method the most specific method
	 * @param budgets the budgets in declaration order
	 */
	public record BudgetedMethod(Method method, List<BoundBudget> budgets) {
	}

}
