package dev.ratelimit.key;

import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;

import dev.ratelimit.core.LimitRequest;
import dev.ratelimit.core.RateLimitPolicy;

/**
 * A policy as applied at one place (an annotated method or a route): the policy
 * with its key and cost expressions already parsed.
 *
 * @param policy the policy, with the key expression in force at this place
 * @param key the parsed key expression
 * @param cost the parsed cost expression, or {@code null} for a fixed cost
 * @param fixedCost the cost when {@code cost} is {@code null}
 */
public record BoundPolicy(RateLimitPolicy policy, Expression key, Expression cost, long fixedCost) {

	/**
	 * Evaluates the key and cost for one call.
	 * @param expressions the evaluator
	 * @param context the call's evaluation context
	 * @return the request to hand to the limiter
	 */
	public LimitRequest toRequest(KeyExpressions expressions, EvaluationContext context) {
		long units = (this.cost != null) ? expressions.cost(this.cost, context, this.policy.name()) : this.fixedCost;
		return new LimitRequest(this.policy, expressions.key(this.key, context), units);
	}

}
