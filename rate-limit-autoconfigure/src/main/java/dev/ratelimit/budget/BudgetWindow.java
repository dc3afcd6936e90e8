package dev.ratelimit.budget;

import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.time.temporal.TemporalAdjusters;
import java.util.Locale;

/**
 * The window a budget amount applies to: a calendar day, week (Monday to
 * Monday) or month in the budget's time zone, or a rolling window that starts
 * with the first charge and lasts a fixed time.
 *
 * @param kind the kind of window
 * @param rollingMicros the length of a rolling window; 0 for calendar windows
 */
public record BudgetWindow(Kind kind, long rollingMicros) {

	/**
	 * Kinds of window.
	 */
	public enum Kind {

		/** From the first charge, for a fixed time. */
		ROLLING,

		/** A calendar day, midnight to midnight in the budget's zone. */
		DAY,

		/** A calendar week, Monday midnight to Monday midnight in the budget's zone. */
		WEEK,

		/** A calendar month, from the first at midnight in the budget's zone. */
		MONTH

	}

	/**
	 * Parses {@code day}, {@code week}, {@code month}, or a duration for a rolling
	 * window ({@code 24h}, {@code 30m}, {@code PT24H}).
	 * @param text the window
	 * @return the window
	 * @throws IllegalArgumentException if the text is none of these
	 */
	public static BudgetWindow parse(String text) {
		String value = (text != null) ? text.strip().toLowerCase(Locale.ROOT) : "";
		switch (value) {
			case "day", "daily":
				return new BudgetWindow(Kind.DAY, 0);
			case "week", "weekly":
				return new BudgetWindow(Kind.WEEK, 0);
			case "month", "monthly":
				return new BudgetWindow(Kind.MONTH, 0);
			default:
				return rolling(parseDuration(text));
		}
	}

	/**
	 * Creates a rolling window.
	 * @param length the window's length
	 * @return the window
	 */
	public static BudgetWindow rolling(Duration length) {
		long micros = length.toNanos() / 1_000L;
		if (micros <= 0) {
			throw new IllegalArgumentException("a rolling window must be positive, was " + length);
		}
		return new BudgetWindow(Kind.ROLLING, micros);
	}

	/**
	 * Returns the calendar window that contains an instant.
	 * @param nowMicros the instant, in microseconds since the epoch
	 * @param zone the budget's time zone
	 * @return the window containing it, and the end of the one after
	 * @throws IllegalStateException for a rolling window, which has no fixed position
	 */
	public Span span(long nowMicros, ZoneId zone) {
		if (this.kind == Kind.ROLLING) {
			throw new IllegalStateException("a rolling window starts with its first charge");
		}
		Instant now = Instant.ofEpochSecond(Math.floorDiv(nowMicros, 1_000_000L),
				Math.floorMod(nowMicros, 1_000_000L) * 1_000L);
		ZonedDateTime start = start(now.atZone(zone));
		ZonedDateTime end = advance(start);
		return new Span(micros(start), micros(end), micros(advance(end)));
	}

	private ZonedDateTime start(ZonedDateTime at) {
		// atStartOfDay in the zone: a day that begins with a DST gap starts at its first valid time.
		ZonedDateTime day = at.toLocalDate().atStartOfDay(at.getZone());
		return switch (this.kind) {
			case WEEK -> day.with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY)).toLocalDate()
				.atStartOfDay(at.getZone());
			case MONTH -> day.withDayOfMonth(1).toLocalDate().atStartOfDay(at.getZone());
			default -> day;
		};
	}

	private ZonedDateTime advance(ZonedDateTime start) {
		return switch (this.kind) {
			case WEEK -> start.toLocalDate().plusWeeks(1).atStartOfDay(start.getZone());
			case MONTH -> start.toLocalDate().plusMonths(1).atStartOfDay(start.getZone());
			default -> start.toLocalDate().plusDays(1).atStartOfDay(start.getZone());
		};
	}

	private static long micros(ZonedDateTime time) {
		Instant instant = time.toInstant();
		return instant.getEpochSecond() * 1_000_000L + instant.getNano() / 1_000L;
	}

	private static Duration parseDuration(String text) {
		String value = (text != null) ? text.strip().toLowerCase(Locale.ROOT) : "";
		try {
			if (value.startsWith("p")) {
				return Duration.parse(value.toUpperCase(Locale.ROOT));
			}
			java.util.regex.Matcher matcher = java.util.regex.Pattern.compile("(\\d{1,12})(ms|s|m|h|d)")
				.matcher(value);
			if (matcher.matches()) {
				long amount = Long.parseLong(matcher.group(1));
				return switch (matcher.group(2)) {
					case "ms" -> Duration.ofMillis(amount);
					case "s" -> Duration.ofSeconds(amount);
					case "m" -> Duration.ofMinutes(amount);
					case "h" -> Duration.ofHours(amount);
					default -> Duration.of(amount, ChronoUnit.DAYS);
				};
			}
		}
		catch (DateTimeParseException ex) {
			// reported below
		}
		throw new IllegalArgumentException(
				"'" + text + "' is not a budget window: use day, week, month, or a rolling duration such as 24h");
	}

	@Override
	public String toString() {
		return (this.kind == Kind.ROLLING) ? "rolling " + Duration.ofNanos(this.rollingMicros * 1_000L)
				: this.kind.name().toLowerCase(Locale.ROOT);
	}

	/**
	 * Where a calendar window lies.
	 *
	 * @param startMicros the window's start
	 * @param endMicros the window's end (the next window's start)
	 * @param nextEndMicros the next window's end
	 */
	public record Span(long startMicros, long endMicros, long nextEndMicros) {
	}

}
