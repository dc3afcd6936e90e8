package dev.ratelimit.budget;

import java.math.BigDecimal;
import java.math.RoundingMode;

import org.jspecify.annotations.Nullable;

/**
 * Money and token amounts as whole micro-units (one millionth of the unit), so
 * that sums are exact: {@code 5.00} USD is {@code 5_000_000}. Parsing goes
 * through {@link BigDecimal}, never through a floating-point number.
 */
public final class Amounts {

	/** Micro-units per unit. */
	public static final long MICROS_PER_UNIT = 1_000_000L;

	/** The largest amount: exact in Lua's doubles with room for sums. */
	public static final long MAX_MICROS = 1L << 50;

	private Amounts() {
	}

	/**
	 * Parses a decimal amount such as {@code 5.00}, {@code 2000000} or
	 * {@code 0.000002}; underscores and commas between digits are ignored.
	 * @param text the amount in units
	 * @return the amount in micro-units
	 * @throws IllegalArgumentException if the text is not a non-negative decimal
	 * with at most six fractional digits, or is too large
	 */
	public static long parseMicros(String text) {
		if (text == null || text.isBlank()) {
			throw new IllegalArgumentException("an amount is required");
		}
		BigDecimal value;
		try {
			value = new BigDecimal(text.strip().replace("_", "").replace(",", ""));
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException("'" + text + "' is not a decimal amount");
		}
		return toMicros(value, text);
	}

	/**
	 * Converts a decimal number of units to micro-units exactly.
	 * @param value the amount in units
	 * @param original what to quote in errors
	 * @return the amount in micro-units
	 * @throws IllegalArgumentException if negative, finer than a micro-unit, or too large
	 */
	public static long toMicros(BigDecimal value, Object original) {
		if (value.signum() < 0) {
			throw new IllegalArgumentException("amount '" + original + "' is negative");
		}
		BigDecimal micros = value.movePointRight(6);
		try {
			long result = micros.setScale(0, RoundingMode.UNNECESSARY).longValueExact();
			if (result > MAX_MICROS) {
				throw new IllegalArgumentException("amount '" + original + "' is too large");
			}
			return result;
		}
		catch (ArithmeticException ex) {
			throw new IllegalArgumentException(
					"amount '" + original + "' has more than six decimal places or is too large");
		}
	}

	/**
	 * Converts a number from an expression (a {@link Number} or its text) to
	 * micro-units, rounding a finer fraction up: an estimate of a third of a cent
	 * reserves the micro-unit above it rather than less than it costs.
	 * @param value the amount in units, or {@code null}, which is refused
	 * @return the amount in micro-units
	 * @throws IllegalArgumentException if not a finite, non-negative number
	 */
	public static long toMicrosRoundingUp(@Nullable Object value) {
		if (value == null) {
			throw new IllegalArgumentException("the amount is missing");
		}
		BigDecimal decimal;
		try {
			decimal = (value instanceof BigDecimal big) ? big : new BigDecimal(String.valueOf(value).strip());
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException("'" + value + "' is not a number");
		}
		return toMicros(decimal.setScale(6, RoundingMode.CEILING), value);
	}

	/**
	 * Formats micro-units as a decimal number of units with six decimals.
	 * @param micros the amount in micro-units
	 * @return for example {@code 4.250000}
	 */
	public static String format(long micros) {
		return BigDecimal.valueOf(micros, 6).toPlainString();
	}

}
