package dev.ratelimit.key;

import java.util.Set;

import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;

/**
 * Which outcomes of a call count against a policy that counts by outcome:
 * {@code countWhen} on {@code @RateLimited}, over {@code #result} and
 * {@code #exception}, or {@code count-on} on a route rule, over the response
 * status. Evaluated once the call has ended, in the call's evaluation context,
 * where {@link OutcomeSettlement} has set the outcome's variables.
 */
@FunctionalInterface
public interface OutcomeRule {

	/**
	 * Returns whether the ended call counts.
	 * @param context the call's evaluation context, with {@code #result},
	 * {@code #exception} and {@code #status} set
	 * @return whether the units taken stay counted
	 * @throws RuntimeException when the rule cannot be evaluated; the call then counts
	 */
	boolean counts(EvaluationContext context);

	/**
	 * A rule given as a SpEL expression that yields {@code true} when the call
	 * counts.
	 * @param expression the parsed expression
	 * @return the rule
	 */
	static OutcomeRule expression(Expression expression) {
		return new OutcomeRule() {

			@Override
			public boolean counts(EvaluationContext context) {
				Boolean counts = expression.getValue(context, Boolean.class);
				if (counts == null) {
					throw new IllegalStateException("countWhen '" + expression.getExpressionString()
							+ "' yielded null");
				}
				return counts;
			}

			@Override
			public String toString() {
				return expression.getExpressionString();
			}

		};
	}

	/**
	 * A rule that counts the responses whose status is listed.
	 * @param statuses the statuses that count
	 * @return the rule
	 */
	static OutcomeRule statuses(Set<Integer> statuses) {
		Set<Integer> counted = Set.copyOf(statuses);
		return new OutcomeRule() {

			@Override
			public boolean counts(EvaluationContext context) {
				return counted.contains((Integer) context.lookupVariable(OutcomeSettlement.STATUS));
			}

			@Override
			public String toString() {
				return "count-on " + counted;
			}

		};
	}

}
