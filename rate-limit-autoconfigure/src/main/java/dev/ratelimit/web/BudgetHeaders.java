package dev.ratelimit.web;

import java.util.LinkedHashMap;
import java.util.Map;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

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

	private static final String ATTRIBUTE = BudgetHeaders.class.getName() + ".budgets";

	private final boolean enabled;

	/**
	 * Creates a writer.
	 * @param enabled whether to write the field at all
	 */
	public BudgetHeaders(boolean enabled) {
		this.enabled = enabled;
	}

	/**
	 * Records a budget's state and rewrites the field.
	 * @param request the request
	 * @param response the response
	 * @param policy the budget
	 * @param decision its state
	 */
	@SuppressWarnings("unchecked")
	public void record(HttpServletRequest request, HttpServletResponse response, BudgetPolicy policy,
			BudgetDecision decision) {
		if (!this.enabled || !Disclosures.contains(request, policy.name())) {
			// Never an internal budget: what a shared budget has left is nobody's business.
			return;
		}
		Map<String, Object[]> budgets = (Map<String, Object[]>) request.getAttribute(ATTRIBUTE);
		if (budgets == null) {
			budgets = new LinkedHashMap<>();
			request.setAttribute(ATTRIBUTE, budgets);
		}
		budgets.put(policy.name(), new Object[] { policy, decision });
		if (response.isCommitted()) {
			return;
		}
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
		response.setHeader(FIELD, field.toString());
	}

}
