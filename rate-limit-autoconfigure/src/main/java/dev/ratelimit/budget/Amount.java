package dev.ratelimit.budget;

import java.math.BigDecimal;

/**
 * An amount of a budget's unit, held exactly as whole micro-units: what an
 * amount property such as {@code 5.00} or {@code 2,000,000} binds to.
 *
 * @param micros the amount in micro-units, from 0 to {@link Amounts#MAX_MICROS}
 */
public record Amount(long micros) {

	/**
	 * Creates an amount.
	 * @throws IllegalArgumentException if negative or too large
	 */
	public Amount {
		if (micros < 0 || micros > Amounts.MAX_MICROS) {
			throw new IllegalArgumentException("an amount must be between 0 and " + Amounts.format(Amounts.MAX_MICROS)
					+ ", was " + Amounts.format(micros));
		}
	}

	/**
	 * Parses a decimal amount such as {@code 5.00}, {@code 2000000} or
	 * {@code 0.000002}; underscores and commas between digits are ignored.
	 * @param text the amount in units
	 * @return the amount
	 * @throws IllegalArgumentException if the text is not a non-negative decimal
	 * with at most six fractional digits, or is too large
	 * @see Amounts#parseMicros(String)
	 */
	public static Amount parse(String text) {
		return new Amount(Amounts.parseMicros(text));
	}

	/**
	 * Returns the amount as a plain decimal without trailing zeros, for example
	 * {@code 5} or {@code 0.25}.
	 */
	@Override
	public String toString() {
		return BigDecimal.valueOf(this.micros, 6).stripTrailingZeros().toPlainString();
	}

}
