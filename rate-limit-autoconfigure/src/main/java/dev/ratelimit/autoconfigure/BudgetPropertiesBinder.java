package dev.ratelimit.autoconfigure;

import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.budget.Amount;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.BudgetWindow;
import dev.ratelimit.core.PolicyValidationException;

/**
 * Sets what only a budget has from {@code rate-limit.budgets.<name>}: its unit,
 * zone, reservation timeout, error and overrun rules and amounts;
 * {@link LimitPropertiesBinder#BUDGETS} does the rest.
 */
final class BudgetPropertiesBinder {

	/** The window of a single amount whose window is not set. */
	private static final BudgetWindow DAY = new BudgetWindow(BudgetWindow.Kind.DAY, 0);

	private BudgetPropertiesBinder() {
	}

	static void bind(BudgetPolicy.Builder builder, RateLimitProperties.Budget source) {
		builder.unit(source.getUnit())
			.zone(source.getZone())
			.reservationTimeout(source.getReservationTimeout())
			.onError(source.getOnError())
			.onOverrun(source.getOnOverrun());
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
	}

	private static void limit(BudgetPolicy.Builder builder, String prefix, @Nullable BudgetWindow window,
			@Nullable Amount amount) {
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
