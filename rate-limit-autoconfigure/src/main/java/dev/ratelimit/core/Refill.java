package dev.ratelimit.core;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * A refill rate: {@code tokens} added evenly over {@code period}. Written as
 * {@code tokens/period}, for example {@code 1/1s}, {@code 10/s},
 * {@code 100/1m} or {@code 5/500ms}; the period takes the units {@code us},
 * {@code ms}, {@code s}, {@code m}, {@code h} and {@code d}, and a missing
 * amount means one.
 * <p>
 * The rate is kept reduced to lowest terms ({@code 10/1s} is stored as one
 * token per 100,000 µs) so that the integer arithmetic of the algorithms stays
 * exact and small, and two refills are equal when their rates are. It is shown
 * as it was configured, though: {@code 1/10s} stays {@code 1/10s} in the
 * start-up report and the endpoint, although it equals {@code 6/1m}.
 * <p>
 * Immutable.
 */
public final class Refill {

	private static final Pattern SYNTAX = Pattern
		.compile("\\s*(\\d{1,15})\\s*/\\s*(\\d{0,15})\\s*(us|ms|s|m|h|d)\\s*");

	private final long tokens;

	private final long periodMicros;

	private final String text;

	/**
	 * Creates a refill rate of {@code tokens} per {@code periodMicros}, shown as
	 * given, such as {@code 20/2s}.
	 * @param tokens tokens per period, positive
	 * @param periodMicros the period in microseconds, positive
	 */
	public Refill(long tokens, long periodMicros) {
		this(tokens, periodMicros, null);
	}

	private Refill(long tokens, long periodMicros, @Nullable String text) {
		if (tokens <= 0) {
			throw new PolicyValidationException("refill", tokens + "/" + periodMicros + "us",
					"tokens per period must be positive");
		}
		if (periodMicros <= 0) {
			throw new PolicyValidationException("refill", tokens + "/" + periodMicros + "us",
					"period must be at least 1us");
		}
		long gcd = gcd(tokens, periodMicros);
		this.tokens = tokens / gcd;
		this.periodMicros = periodMicros / gcd;
		this.text = (text != null) ? text : tokens + "/" + Durations.format(periodMicros);
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
			return new Refill(tokens, Math.multiplyExact(amount, unitMicros),
					tokens + "/" + amount + matcher.group(3));
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
	 * Returns the tokens added per {@link #periodMicros()}, in lowest terms.
	 * @return the tokens per reduced period
	 */
	public long tokens() {
		return this.tokens;
	}

	/**
	 * Returns the period in which {@link #tokens()} are added, in microseconds
	 * and in lowest terms.
	 * @return the reduced period in microseconds
	 */
	public long periodMicros() {
		return this.periodMicros;
	}

	/**
	 * Returns whether the other object is a refill of the same rate, however
	 * each was written: {@code 1/10s} equals {@code 6/1m}.
	 */
	@Override
	public boolean equals(Object other) {
		return (this == other) || (other instanceof Refill that && this.tokens == that.tokens
				&& this.periodMicros == that.periodMicros);
	}

	@Override
	public int hashCode() {
		return 31 * Long.hashCode(this.tokens) + Long.hashCode(this.periodMicros);
	}

	/**
	 * Returns the rate as it was configured, in the syntax {@link #parse} reads:
	 * {@code 1/10s} parsed from {@code 1/10s}, {@code 10/1s} from {@code 10/s};
	 * a rate built in code in the largest unit that divides its period, such as
	 * {@code 1000/1s}.
	 */
	@Override
	public String toString() {
		return this.text;
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
