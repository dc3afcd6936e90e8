package dev.ratelimit.web;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.function.BiConsumer;

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
	public void record(HttpServletRequest request, HttpServletResponse response, BudgetPolicy policy,
			BudgetDecision decision) {
		Disclosures disclosures = Disclosures.of(request);
		if (this.enabled && disclosures != null && disclosures.contains(policy.name())) {
			String field = field(budgets(request::getAttribute, request::setAttribute), policy, decision);
			if (!response.isCommitted()) {
				response.setHeader(FIELD, field);
			}
		}
	}

	/**
	 * Records a budget's state for a request whose attributes are a map (a
	 * WebFlux exchange's) and rewrites the field through a setter.
	 * @param attributes the request's attributes
	 * @param setHeader sets a header field, replacing any value
	 * @param policy the budget
	 * @param decision its state
	 */
	void record(Map<String, Object> attributes, BiConsumer<String, String> setHeader, BudgetPolicy policy,
			BudgetDecision decision) {
		Disclosures disclosures = Disclosures.of(attributes);
		if (this.enabled && disclosures != null && disclosures.contains(policy.name())) {
			setHeader.accept(FIELD, field(budgets(attributes::get, attributes::put), policy, decision));
		}
	}

	/** The budgets a request recorded so far, by name, kept in one of its attributes. */
	@SuppressWarnings("unchecked")
	private static Map<String, Object[]> budgets(Function<String, Object> get, BiConsumer<String, Object> set) {
		Map<String, Object[]> budgets = (Map<String, Object[]>) get.apply(ATTRIBUTE);
		if (budgets == null) {
			budgets = new LinkedHashMap<>();
			set.accept(ATTRIBUTE, budgets);
		}
		return budgets;
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
