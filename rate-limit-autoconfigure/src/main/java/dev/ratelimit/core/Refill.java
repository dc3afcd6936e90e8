package dev.ratelimit.core;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A refill rate: {@code tokens} added evenly over {@code period}. Written as
 * {@code tokens/period}, for example {@code 1/1s}, {@code 10/s},
 * {@code 100/1m} or {@code 5/500ms}; the period takes the units {@code us},
 * {@code ms}, {@code s}, {@code m}, {@code h} and {@code d}, and a missing
 * amount means one.
 * <p>
 * The rate is kept reduced to lowest terms ({@code 10/1s} is stored as one
 * token per 100,000 µs) so that the integer arithmetic of the algorithms stays
 * exact and small.
 *
 * @param tokens tokens added per period, reduced to lowest terms
 * @param periodMicros the period in microseconds, reduced to lowest terms
 */
public record Refill(long tokens, long periodMicros) {

	private static final long[] STANDARD_PERIODS = { 1_000_000L, 60_000_000L, 3_600_000_000L, 86_400_000_000L };

	private static final Pattern SYNTAX = Pattern
		.compile("\\s*(\\d{1,15})\\s*/\\s*(\\d{0,15})\\s*(us|ms|s|m|h|d)\\s*");

	/**
	 * Creates a refill rate, reducing it to lowest terms.
	 * @param tokens tokens per period, positive
	 * @param periodMicros the period in microseconds, positive
	 */
	public Refill {
		if (tokens <= 0) {
			throw new PolicyValidationException("refill", tokens + "/" + periodMicros + "us",
					"tokens per period must be positive");
		}
		if (periodMicros <= 0) {
			throw new PolicyValidationException("refill", tokens + "/" + periodMicros + "us",
					"period must be at least 1us");
		}
		long gcd = gcd(tokens, periodMicros);
		tokens /= gcd;
		periodMicros /= gcd;
	}

	/**
	 * Creates a refill rate of {@code tokens} per {@code period}.
	 * @param tokens tokens per period, positive
	 * @param period the period, at least one microsecond
	 * @return the rate
	 */
	public static Refill of(long tokens, Duration period) {
		return new Refill(tokens, period.toNanos() / 1_000L);
	}

	/**
	 * Parses the {@code tokens/period} syntax, for example {@code 10/1s}.
	 * @param text the text to parse
	 * @return the rate
	 * @throws PolicyValidationException if the text is not a positive rate
	 */
	public static Refill parse(String text) {
		Matcher matcher = (text != null) ? SYNTAX.matcher(text.toLowerCase(Locale.ROOT)) : null;
		if (matcher == null || !matcher.matches()) {
			throw new PolicyValidationException("refill", text,
					"expected tokens/period such as 10/1s, 100/1m or 5/500ms (units us, ms, s, m, h, d)");
		}
		long tokens = Long.parseLong(matcher.group(1));
		long amount = matcher.group(2).isEmpty() ? 1 : Long.parseLong(matcher.group(2));
		long unitMicros = Durations.unitMicros(matcher.group(3));
		if (tokens == 0 || amount == 0) {
			throw new PolicyValidationException("refill", text, "tokens and period must both be positive");
		}
		try {
			return new Refill(tokens, Math.multiplyExact(amount, unitMicros));
		}
		catch (ArithmeticException ex) {
			throw new PolicyValidationException("refill", text, "period is too long");
		}
	}

	/**
	 * Returns the microseconds needed to refill {@code tokens} tokens, rounded up.
	 * @param amount the number of tokens
	 * @return the time to refill them in microseconds
	 */
	public long microsFor(long amount) {
		return LongMath.ceilDiv(Math.multiplyExact(amount, this.periodMicros), this.tokens);
	}

	/**
	 * Returns the rate in the syntax {@link #parse} reads, per the most natural
	 * whole period: {@code 10/1s} rather than {@code 1/100ms}.
	 */
	@Override
	public String toString() {
		for (long period : STANDARD_PERIODS) {
			long scaled = (this.tokens <= Long.MAX_VALUE / period) ? this.tokens * period : 0;
			if (scaled != 0 && scaled % this.periodMicros == 0) {
				return scaled / this.periodMicros + "/" + Durations.format(period);
			}
		}
		return this.tokens + "/" + Durations.format(this.periodMicros);
	}

	private static long gcd(long a, long b) {
		while (b != 0) {
			long t = a % b;
			a = b;
			b = t;
		}
		return a;
	}

}
