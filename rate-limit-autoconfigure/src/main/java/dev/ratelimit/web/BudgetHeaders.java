package dev.ratelimit.web;

import java.util.Map;


import dev.ratelimit.budget.Amounts;
import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.BudgetLimit;
import dev.ratelimit.budget.BudgetPolicy;

/**
 * Writes the {@code Budget-Remaining} field: one Structured Field List item per
 * budget and window, the budget name as a String with the window, what remains,
 * the amount, the unit (amounts as decimal Strings, since Structured Field
 * decimals stop at three places) and the seconds until the window resets:
 * <pre>
 * Budget-Remaining: "tenant-daily";w="day";r="4.250000";q="5.000000";u="USD";t=41234
 * </pre>
 * The latest state of each budget in a request wins: after a call is settled
 * the field shows the budget after the actual cost.
 */
public final class BudgetHeaders {

	/** The response header field. */
	public static final String FIELD = "Budget-Remaining";

	private final boolean enabled;

	/**
	 * Creates a writer.
	 * @param enabled whether to write the field at all
	 */
	public BudgetHeaders(boolean enabled) {
		this.enabled = enabled;
	}

	/**
	 * Records a budget's state for a request and sets the field on its response
	 * while it has not begun; never for a budget the caller may not see.
	 * @param disclosures the request's disclosed limits, which keep its budgets too
	 * @param target the response
	 * @param writer writes its fields
	 * @param policy the budget
	 * @param decision its state
	 * @param <T> the response's type
	 */
	<T> void record(Disclosures disclosures, T target, HeaderWriter<T> writer, BudgetPolicy policy,
			BudgetDecision decision) {
		// Never an internal budget: what a shared budget has left is nobody's business.
		if (this.enabled && disclosures.contains(policy.name())) {
			String field = field(disclosures.budgets(), policy, decision);
			if (!writer.committed(target)) {
				writer.set(target, FIELD, field);
			}
		}
	}

	/** Records a budget's state (never an internal budget's: the caller checked) and returns the whole field. */
	private static String field(Map<String, Object[]> budgets, BudgetPolicy policy, BudgetDecision decision) {
		budgets.put(policy.name(), new Object[] { policy, decision });
		StringBuilder field = new StringBuilder();
		for (Object[] entry : budgets.values()) {
			BudgetPolicy budget = (BudgetPolicy) entry[0];
			BudgetDecision state = (BudgetDecision) entry[1];
			for (int i = 0; i < budget.limits().size(); i++) {
				BudgetLimit limit = budget.limits().get(i);
				if (!field.isEmpty()) {
					field.append(", ");
				}
				field.append('"').append(budget.name()).append("\";w=\"").append(limit.label())
					.append("\";r=\"").append(Amounts.format(state.remainingMicros()[i]))
					.append("\";q=\"").append(Amounts.format(limit.amountMicros()))
					.append("\";u=\"").append(budget.unit())
					.append("\";t=").append(RateLimitHeaders.seconds(state.resetAfterMicros()[i]));
			}
		}
		return field.toString();
	}

}
