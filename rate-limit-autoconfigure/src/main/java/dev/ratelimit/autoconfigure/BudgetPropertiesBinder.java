package dev.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.ratelimit.budget.Amount;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.BudgetWindow;
import dev.ratelimit.core.PolicyValidationException;
import dev.ratelimit.key.KeyExpressions;

/**
 * Builds the budgets from {@code rate-limit.budgets}, failing with the exact
 * property name on the first invalid value.
 */
final class BudgetPropertiesBinder {

	/** The window of a single amount whose window is not set. */
	private static final BudgetWindow DAY = new BudgetWindow(BudgetWindow.Kind.DAY, 0);

	private BudgetPropertiesBinder() {
	}

	static List<BudgetPolicy> bind(RateLimitProperties properties, KeyExpressions expressions) {
		List<BudgetPolicy> budgets = new ArrayList<>();
		for (Map.Entry<String, RateLimitProperties.Budget> entry : properties.getBudgets().entrySet()) {
			budgets.add(bind(entry.getKey(), entry.getValue(), expressions));
		}
		return budgets;
	}

	static BudgetPolicy bind(String name, RateLimitProperties.Budget source, KeyExpressions expressions) {
		String prefix = "rate-limit.budgets." + name + ".";
		BudgetPolicy budget;
		try {
			BudgetPolicy.Builder builder = BudgetPolicy.builder(name)
				.unit(source.getUnit())
				.key(source.getKey())
				.zone(source.getZone())
				.failureMode(source.getFailureMode())
				.reservationTimeout(source.getReservationTimeout())
				.onError(source.getOnError())
				.visibility(source.getVisibility());
			if (source.getAmount() != null || source.getWindow() != null) {
				// A single amount and window are written without a list.
				if (!source.getLimits().isEmpty()) {
					throw new PolicyValidationException("limits", "[...]",
							"use either amount and window, or limits, not both");
				}
				if (source.getAmount() == null) {
					throw new PolicyValidationException("amount", null, "must be set with window, for example 5.00");
				}
				limit(builder, "", source.getWindow(), source.getAmount());
			}
			List<RateLimitProperties.BudgetLimit> limits = source.getLimits();
			for (int i = 0; i < limits.size(); i++) {
				limit(builder, "limits[" + i + "].", limits.get(i).getWindow(), limits.get(i).getAmount());
			}
			budget = builder.build();
		}
		catch (PolicyValidationException ex) {
			throw InvalidProperty.of(prefix, ex);
		}
		InvalidProperty.checkKey(expressions, prefix + "key", budget.key());
		return budget;
	}

	private static void limit(BudgetPolicy.Builder builder, String prefix, BudgetWindow window,
			Amount amount) {
		if (window == null && !prefix.isEmpty()) {
			throw new PolicyValidationException(prefix + "window", null,
					"must be set: day, week, month, or a rolling duration such as 24h");
		}
		if (amount == null) {
			throw new PolicyValidationException(prefix + "amount", null, "must be set, for example 100.00");
		}
		try {
			builder.limit((window != null) ? window : DAY, amount.micros());
		}
		catch (PolicyValidationException ex) {
			// The builder numbers its limits; the property is the one being bound.
			throw new PolicyValidationException(prefix + "amount", amount, ex.getReason());
		}
	}

}
