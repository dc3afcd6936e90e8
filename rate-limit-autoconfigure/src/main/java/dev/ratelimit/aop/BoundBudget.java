package dev.ratelimit.aop;

import org.jspecify.annotations.Nullable;

import org.springframework.expression.Expression;

import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.key.AppliedLimit;

/**
 * A budget as applied to one annotated method, its expressions parsed.
 *
 * @param applied the budget as applied here, with the key expression in force
 * @param estimate the estimate expression
 * @param actual the actual-cost expression, or {@code null} to charge the estimate
 */
public record BoundBudget(AppliedLimit<BudgetPolicy> applied, Expression estimate, @Nullable Expression actual) {

	/** @return the budget as it applies here now, for its name, visibility and rules */
	public BudgetPolicy policy() {
		return this.applied.limit();
	}

	/** @return the key expression in force here */
	public Expression key() {
		return this.applied.key();
	}

}
