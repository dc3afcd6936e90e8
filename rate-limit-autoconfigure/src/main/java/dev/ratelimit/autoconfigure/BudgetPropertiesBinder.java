package dev.ratelimit.autoconfigure;

import java.time.DateTimeException;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.core.PolicyValidationException;
import dev.ratelimit.key.KeyExpressions;

/**
 * Builds the budgets from {@code rate-limit.budgets}, failing with the exact
 * property name on the first invalid value.
 */
final class BudgetPropertiesBinder {

	private BudgetPropertiesBinder() {
	}

	static List<BudgetPolicy> bind(RateLimitProperties properties, KeyExpressions expressions) {
		List<BudgetPolicy> budgets = new ArrayList<>();
		for (Map.Entry<String, RateLimitProperties.Budget> entry : properties.getBudgets().entrySet()) {
			budgets.add(bind(entry.getKey(), entry.getValue(), expressions));
		}
		return budgets;
	}

	private static BudgetPolicy bind(String name, RateLimitProperties.Budget source, KeyExpressions expressions) {
		String prefix = "rate-limit.budgets." + name + ".";
		BudgetPolicy budget;
		try {
			BudgetPolicy.Builder builder = BudgetPolicy.builder(name)
				.unit(source.getUnit())
				.key(source.getKey())
				.zone(zone(source.getZone()))
				.failureMode(source.getFailureMode())
				.lease(source.getLease())
				.onError(source.getOnError())
				.visibility(source.getVisibility());
			if (source.getAmount() != null || source.getWindow() != null) {
				if (!source.getLimits().isEmpty()) {
					throw new PolicyValidationException("limits", "[...]",
							"use either amount and window, or limits, not both");
				}
				builder.limit((source.getWindow() != null) ? source.getWindow() : "day", source.getAmount());
			}
			for (RateLimitProperties.BudgetLimit limit : source.getLimits()) {
				builder.limit(limit.getWindow(), limit.getAmount());
			}
			budget = builder.build();
		}
		catch (PolicyValidationException ex) {
			if (source.getLimits().isEmpty() && ex.getAttribute().startsWith("limits[0].")) {
				// A single amount and window are written without a list.
				throw InvalidProperty.of(prefix + ex.getAttribute().substring("limits[0].".length()), ex.getValue(),
						ex.getReason(), ex);
			}
			throw InvalidProperty.of(prefix, ex);
		}
		InvalidProperty.checkKey(expressions, prefix + "key", budget.key());
		return budget;
	}

	private static ZoneId zone(String zone) {
		try {
			return ZoneId.of(zone);
		}
		catch (DateTimeException ex) {
			throw new PolicyValidationException("zone", zone, "not a time zone id such as UTC or Europe/Berlin");
		}
	}

}
