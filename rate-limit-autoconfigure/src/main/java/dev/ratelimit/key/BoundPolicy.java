package dev.ratelimit.key;

import java.util.function.UnaryOperator;

import org.jspecify.annotations.Nullable;

import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;

import dev.ratelimit.core.LimitRequest;
import dev.ratelimit.core.PolicyValidationException;
import dev.ratelimit.core.RateLimitPolicy;

/**
 * A policy as applied at one place (an annotated method or a route): the live
 * policy with what the place changes, its cost expression parsed, and when the
 * call counts.
 *
 * @param applied the policy as applied here
 * @param cost the parsed cost expression, or {@code null} for a fixed cost
 * @param fixedCost the cost when {@code cost} is {@code null}
 * @param countWhen which outcomes count, or {@code null} when every call counts
 */
public record BoundPolicy(AppliedLimit<RateLimitPolicy> applied, @Nullable Expression cost, long fixedCost,
		@Nullable OutcomeRule countWhen) {

	/**
	 * Binds a policy whose every call counts.
	 * @param applied the policy as applied here
	 * @param cost the parsed cost expression, or {@code null} for a fixed cost
	 * @param fixedCost the cost when {@code cost} is {@code null}
	 */
	public BoundPolicy(AppliedLimit<RateLimitPolicy> applied, @Nullable Expression cost, long fixedCost) {
		this(applied, cost, fixedCost, null);
	}

	/**
	 * Guards what a place changes on a policy counted by outcome: a refresh that
	 * turns the policy into one that cannot give units back exactly (shaping,
	 * wait mode, prefetch, shadow) is refused at that place, which keeps
	 * deciding with the policy as it was (see {@link AppliedLimit}).
	 * @param local what the place changes
	 * @return the same change, refusing a policy that cannot be counted by outcome
	 */
	public static UnaryOperator<RateLimitPolicy> countedByOutcome(UnaryOperator<RateLimitPolicy> local) {
		return (configured) -> {
			RateLimitPolicy policy = local.apply(configured);
			String problem = policy.outcomeCountingProblem();
			if (problem != null) {
				throw new PolicyValidationException("count-on", policy.name(), problem);
			}
			return policy;
		};
	}

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
	public @Nullable LimitRequest toRequest(KeyExpressions expressions, EvaluationContext context) {
		AppliedLimit.Resolved<RateLimitPolicy> call = this.applied.resolve(context);
		if (call == null) {
			return null;
		}
		RateLimitPolicy policy = call.limit();
		long units = (this.cost != null) ? expressions.cost(this.cost, context, policy.name()) : this.fixedCost;
		return new LimitRequest(policy, call.key(), units, this.countWhen != null);
	}

}
