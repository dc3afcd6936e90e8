package dev.ratelimit.client;

import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * Reads what a provider's answer says about when to call it next:
 * <ul>
 * <li>{@code Retry-After} (RFC 9110, 10.2.3), as delta-seconds ({@code 120}) or an
 * HTTP-date ({@code Wed, 21 Oct 2015 07:28:00 GMT});</li>
 * <li>the IETF fields of draft-ietf-httpapi-ratelimit-headers, as this starter
 * writes them: {@code RateLimit: "name";r=0;t=2} (an exhausted quota, restored in
 * 2 s); and the older drafts' {@code RateLimit-Remaining} with {@code RateLimit-Reset};</li>
 * <li>the vendor fields {@code x-ratelimit-remaining-requests} with
 * {@code x-ratelimit-reset-requests}, and {@code x-ratelimit-remaining-tokens} with
 * {@code x-ratelimit-reset-tokens}, whose resets read {@code 1s}, {@code 6m0s},
 * {@code 20ms} or {@code 1h2m3.5s}.</li>
 * </ul>
 * A quota reported as exhausted (remaining 0) asks for a pause until its reset,
 * so that the next call waits rather than being refused. A field that does not
 * read is ignored: a provider's malformed header never fails a call.
 */
public final class ProviderSignals {

	/** Neither field asks for a pause. */
	public static final long NONE = -1;

	private static final Pattern IETF_ITEM = Pattern.compile("(?:\"(?:[^\"\\\\]|\\\\.)*\"|[^;,\\s]+)((?:\\s*;\\s*[a-z*][a-z0-9_.*-]*(?:=[^;,]*)?)*)");

	private static final Pattern IETF_PARAMETER = Pattern.compile(";\\s*([a-z*][a-z0-9_.*-]*)=\\s*(-?\\d+)");

	private static final Pattern GO_DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)(h|ms|us|µs|ns|m|s)");

	private ProviderSignals() {
	}

	/**
	 * Returns the wait a {@code Retry-After} value asks for.
	 * @param value the field's value, or {@code null}
	 * @param nowEpochMicros the current wall-clock time, to read an HTTP-date against
	 * @return the wait in microseconds (zero for a date past), or {@link #NONE}
	 */
	public static long retryAfterMicros(@Nullable String value, long nowEpochMicros) {
		if (value == null || value.isBlank()) {
			return NONE;
		}
		String text = value.trim();
		if (text.chars().allMatch(Character::isDigit)) {
			// Whole seconds by the RFC; a value too long for a long is a pause longer than any deadline.
			return (text.length() > 12) ? Long.MAX_VALUE / 2 : Long.parseLong(text) * 1_000_000L;
		}
		try {
			long epochMicros = ZonedDateTime.parse(text, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant().toEpochMilli()
					* 1_000L;
			return Math.max(0, epochMicros - nowEpochMicros);
		}
		catch (DateTimeParseException ex) {
			return NONE;
		}
	}

	/**
	 * Returns the pause the rate-limit fields of an answer ask for: until the
	 * latest reset of a quota reported exhausted.
	 * @param header the first value of a header field by name (case-insensitive), or {@code null}
	 * @return the pause in microseconds, or {@link #NONE} when no quota is exhausted
	 */
	public static long exhaustedQuotaMicros(UnaryOperator<@Nullable String> header) {
		long pause = NONE;
		pause = Math.max(pause, ietf(header.apply("RateLimit")));
		pause = Math.max(pause, exhausted(header.apply("RateLimit-Remaining"), seconds(header.apply("RateLimit-Reset"))));
		pause = Math.max(pause, exhausted(header.apply("x-ratelimit-remaining-requests"),
				resetMicros(header.apply("x-ratelimit-reset-requests"))));
		pause = Math.max(pause, exhausted(header.apply("x-ratelimit-remaining-tokens"),
				resetMicros(header.apply("x-ratelimit-reset-tokens"))));
		return pause;
	}

	/**
	 * Reads a vendor reset value: a Go-style duration ({@code 1s}, {@code 6m0s},
	 * {@code 20ms}, {@code 1h2m3.5s}) or plain seconds ({@code 30}, {@code 0.5}).
	 * @param value the value, or {@code null}
	 * @return the duration in microseconds, or {@link #NONE} when it does not read
	 */
	public static long resetMicros(@Nullable String value) {
		if (value == null || value.isBlank()) {
			return NONE;
		}
		String text = value.trim().toLowerCase(Locale.ROOT);
		try {
			if (text.matches("\\d+(\\.\\d+)?")) {
				return (long) (Double.parseDouble(text) * 1_000_000d);
			}
			Matcher matcher = GO_DURATION.matcher(text);
			double micros = 0;
			int end = 0;
			while (matcher.find() && matcher.start() == end) {
				micros += Double.parseDouble(matcher.group(1)) * unitMicros(matcher.group(2));
				end = matcher.end();
			}
			return (end == text.length() && end > 0) ? (long) Math.ceil(micros) : NONE;
		}
		catch (NumberFormatException ex) {
			return NONE;
		}
	}

	private static double unitMicros(String unit) {
		return switch (unit) {
			case "h" -> 3_600_000_000d;
			case "m" -> 60_000_000d;
			case "s" -> 1_000_000d;
			case "ms" -> 1_000d;
			case "us", "µs" -> 1d;
			default -> 0.001d;
		};
	}

	/** {@code "name";r=0;t=2, "other";r=4;t=1}: the longest {@code t} of an item with {@code r=0}. */
	private static long ietf(@Nullable String value) {
		if (value == null) {
			return NONE;
		}
		long pause = NONE;
		Matcher item = IETF_ITEM.matcher(value);
		while (item.find()) {
			long remaining = NONE;
			long reset = NONE;
			Matcher parameter = IETF_PARAMETER.matcher(item.group(1));
			while (parameter.find()) {
				String number = parameter.group(2);
				if (number.length() > 12) {
					continue;
				}
				if (parameter.group(1).equals("r")) {
					remaining = Long.parseLong(number);
				}
				else if (parameter.group(1).equals("t")) {
					reset = Long.parseLong(number) * 1_000_000L;
				}
			}
			pause = Math.max(pause, exhausted((remaining == NONE) ? null : Long.toString(remaining), reset));
		}
		return pause;
	}

	private static long seconds(@Nullable String value) {
		if (value == null || !value.trim().matches("\\d{1,12}")) {
			return NONE;
		}
		return Long.parseLong(value.trim()) * 1_000_000L;
	}

	private static long exhausted(@Nullable String remaining, long resetMicros) {
		if (remaining == null || resetMicros < 0) {
			return NONE;
		}
		String text = remaining.trim();
		// "0", or a negative count some providers send once overdrawn.
		return (text.matches("-?\\d{1,12}") && Long.parseLong(text) <= 0) ? resetMicros : NONE;
	}

}
