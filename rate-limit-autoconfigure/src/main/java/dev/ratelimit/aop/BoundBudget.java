package dev.ratelimit.aop;

import org.springframework.expression.Expression;

import dev.ratelimit.budget.BudgetPolicy;

/**
 * A budget as applied to one annotated method, its expressions parsed.
 *
 * @param policy the budget
 * @param key the key expression in force
 * @param estimate the estimate expression
 * @param actual the actual-cost expression, or {@code null} to charge the estimate
 */
public record BoundBudget(BudgetPolicy policy, Expression key, Expression estimate, Expression actual) {
}
