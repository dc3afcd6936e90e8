package dev.ratelimit.core;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * Parses the duration syntax of policies: an amount and a unit ({@code us},
 * {@code ms}, {@code s}, {@code m}, {@code h}, {@code d}), such as {@code 1s}
 * or {@code 500ms}, or an ISO-8601 duration such as {@code PT1M}.
 */
public final class Durations {

	private static final Pattern SIMPLE = Pattern.compile("\\s*(\\d{1,15})\\s*(us|ms|s|m|h|d)\\s*");

	private Durations() {
	}

	static long unitMicros(String unit) {
		return switch (unit) {
			case "us" -> 1L;
			case "ms" -> 1_000L;
			case "s" -> 1_000_000L;
			case "m" -> 60_000_000L;
			case "h" -> 3_600_000_000L;
			default -> 86_400_000_000L;
		};
	}

	/**
	 * Formats microseconds in the largest unit that divides them exactly, for
	 * example {@code 1h}, {@code 100ms} or {@code 333334us}.
	 * @param micros the duration in microseconds
	 * @return the text, in the syntax {@link #parseMicros} reads
	 */
	public static String format(long micros) {
		String[] units = { "d", "h", "m", "s", "ms" };
		for (String unit : units) {
			long size = unitMicros(unit);
			if (micros % size == 0) {
				return micros / size + unit;
			}
		}
		return micros + "us";
	}

	/**
	 * Parses a duration to microseconds.
	 * @param attribute the attribute name, for errors
	 * @param text the text
	 * @return the duration in microseconds, positive
	 */
	public static long parseMicros(String attribute, @Nullable String text) {
		if (text == null) {
			throw new PolicyValidationException(attribute, null, "must be set, for example 1s");
		}
		Matcher matcher = SIMPLE.matcher(text.toLowerCase(Locale.ROOT));
		long micros;
		try {
			if (matcher.matches()) {
				micros = Math.multiplyExact(Long.parseLong(matcher.group(1)), unitMicros(matcher.group(2)));
			}
			else {
				micros = Duration.parse(text.strip()).toNanos() / 1_000L;
			}
		}
		catch (DateTimeParseException | ArithmeticException ex) {
			throw new PolicyValidationException(attribute, text,
					"expected a duration such as 1s, 500ms, 1m, 1h, 1d or PT1M");
		}
		if (micros <= 0) {
			throw new PolicyValidationException(attribute, text, "must be positive");
		}
		return micros;
	}

}
