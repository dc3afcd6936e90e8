package dev.ratelimit.key;

import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;

import dev.ratelimit.core.LimitRequest;
import dev.ratelimit.core.RateLimitPolicy;

/**
 * A policy as applied at one place (an annotated method or a route): the live
 * policy with what the place changes, and its cost expression parsed.
 *
 * @param applied the policy as applied here
 * @param cost the parsed cost expression, or {@code null} for a fixed cost
 * @param fixedCost the cost when {@code cost} is {@code null}
 */
public record BoundPolicy(AppliedLimit<RateLimitPolicy> applied, Expression cost, long fixedCost) {

	/** @return the policy as it applies here now, for its name, key and visibility */
	public RateLimitPolicy policy() {
		return this.applied.limit();
	}

	/** @return the key expression in force here */
	public Expression key() {
		return this.applied.key();
	}

	/**
	 * Evaluates the key and cost for one call, and picks the variant (key
	 * override or plan) that decides it.
	 * @param expressions the evaluator
	 * @param context the call's evaluation context
	 * @return the request to hand to the limiter, or {@code null} when the call is exempt
	 */
	public LimitRequest toRequest(KeyExpressions expressions, EvaluationContext context) {
		if (this.applied.exempt(context)) {
			return null;
		}
		String key = expressions.key(this.applied.key(), context);
		RateLimitPolicy policy = this.applied.select(key, context);
		long units = (this.cost != null) ? expressions.cost(this.cost, context, policy.name()) : this.fixedCost;
		return new LimitRequest(policy, key, units);
	}

}
