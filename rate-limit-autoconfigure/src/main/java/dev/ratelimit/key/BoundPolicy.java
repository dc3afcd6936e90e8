package dev.ratelimit.key;

import org.jspecify.annotations.Nullable;

import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;

import dev.ratelimit.core.LimitRequest;
import dev.ratelimit.core.RateLimitPolicy;

/**
 * A policy as applied at one place (an annotated method or a route): the policy
 * with its key and cost expressions already parsed, and when the call counts.
 *
 * @param policy the policy, with the key expression in force at this place
 * @param key the parsed key expression
 * @param cost the parsed cost expression, or {@code null} for a fixed cost
 * @param fixedCost the cost when {@code cost} is {@code null}
 * @param countWhen which outcomes count, or {@code null} when every call counts
 */
public record BoundPolicy(RateLimitPolicy policy, Expression key, Expression cost, long fixedCost,
		@Nullable OutcomeRule countWhen) {

	/**
	 * Binds a policy whose every call counts.
	 * @param policy the policy
	 * @param key the parsed key expression
	 * @param cost the parsed cost expression, or {@code null} for a fixed cost
	 * @param fixedCost the cost when {@code cost} is {@code null}
	 */
	public BoundPolicy(RateLimitPolicy policy, Expression key, Expression cost, long fixedCost) {
		this(policy, key, cost, fixedCost, null);
	}

	/**
	 * Evaluates the key and cost for one call.
	 * @param expressions the evaluator
	 * @param context the call's evaluation context
	 * @return the request to hand to the limiter
	 */
	public LimitRequest toRequest(KeyExpressions expressions, EvaluationContext context) {
		long units = (this.cost != null) ? expressions.cost(this.cost, context, this.policy.name()) : this.fixedCost;
		return new LimitRequest(this.policy, expressions.key(this.key, context), units, this.countWhen != null);
	}

}
