package dev.ratelimit.concurrency;

import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * How important a call is to an adaptive cap, highest first: when the cap is
 * full the lowest class is shed first, and a class that stays within its
 * guaranteed share is never shed (see {@link Shedding}).
 */
public enum Priority {

	/** Work whose failure is an incident: logins, checkouts, health of the business. */
	CRITICAL,

	/** Ordinary user-facing work. */
	NORMAL,

	/** Work a user does not wait for: prefetches, refreshes, retries of jobs. */
	BACKGROUND,

	/** Work that may always be dropped first: analytics beacons, speculative calls. */
	SHEDDABLE;

	/** Lower-cased once: the label names every shed call's meter, which must not build a string per call. */
	private final String label = name().toLowerCase(Locale.ROOT);

	/**
	 * Reads a class named by a priority expression, ignoring case and
	 * surrounding blanks.
	 * @param value the value, perhaps {@code null}
	 * @return the class, or {@code null} when the value names none
	 */
	public static @Nullable Priority parse(@Nullable String value) {
		if (value == null) {
			return null;
		}
		return switch (value.strip().toLowerCase(Locale.ROOT)) {
			case "critical" -> CRITICAL;
			case "normal" -> NORMAL;
			case "background" -> BACKGROUND;
			case "sheddable" -> SHEDDABLE;
			default -> null;
		};
	}

	/** @return the class's name as written in properties and meters: {@code critical}, {@code normal}, … */
	public String label() {
		return this.label;
	}

}
