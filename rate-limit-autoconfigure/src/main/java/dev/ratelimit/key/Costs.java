package dev.ratelimit.key;

import java.math.BigDecimal;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.InvalidCostException;

/**
 * Turns the value of a cost expression into whole units, rejecting anything a
 * hostile or buggy caller could send: {@code null}, NaN, infinities, negative or
 * fractional amounts, and text that is not a number.
 */
final class Costs {

	private Costs() {
	}

	static long toUnits(@Nullable Object value, String policy) {
		if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
			return checkNotNegative(((Number) value).longValue(), value, policy);
		}
		BigDecimal decimal;
		try {
			decimal = (value instanceof BigDecimal big) ? big : new BigDecimal(String.valueOf(value).strip());
		}
		catch (NumberFormatException ex) {
			throw new InvalidCostException(policy,
					"Cost '" + value + "' of policy '" + policy + "' is not a number");
		}
		try {
			return checkNotNegative(decimal.longValueExact(), value, policy);
		}
		catch (ArithmeticException ex) {
			throw new InvalidCostException(policy,
					"Cost '" + value + "' of policy '" + policy + "' is not a whole number of units");
		}
	}

	private static long checkNotNegative(long cost, @Nullable Object value, String policy) {
		if (cost < 0) {
			throw new InvalidCostException(policy, "Cost '" + value + "' of policy '" + policy + "' is negative");
		}
		return cost;
	}

}
