package dev.ratelimit.budget;

/**
 * One amount of a budget and the window it applies to, for example 5.00 per
 * day.
 *
 * @param window the window
 * @param amountMicros the amount per window, in micro-units
 */
public record BudgetLimit(BudgetWindow window, long amountMicros) {

	/**
	 * Creates a limit.
	 */
	public BudgetLimit {
		if (amountMicros <= 0 || amountMicros > Amounts.MAX_MICROS) {
			throw new IllegalArgumentException("a budget amount must be positive and at most "
					+ Amounts.format(Amounts.MAX_MICROS) + ", was " + Amounts.format(amountMicros));
		}
	}

	/**
	 * Returns a short label of the window, used in headers.
	 * @return {@code day}, {@code week}, {@code month} or {@code rolling}
	 */
	public String label() {
		return this.window.kind().name().toLowerCase(java.util.Locale.ROOT);
	}

}
