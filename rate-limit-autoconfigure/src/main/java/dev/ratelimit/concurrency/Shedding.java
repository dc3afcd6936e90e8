package dev.ratelimit.concurrency;

import java.util.EnumMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.PolicyValidationException;

/**
 * Whom an adaptive cap sheds first, and when it tells them to come back. Each
 * {@link Priority} has a guaranteed share of the limit: a class with fewer calls
 * in flight than its share is never shed. Beyond its share a class may use
 * the limit counting only its own calls and those of the classes above it, and
 * leaving what those above keep: their share or their recent demand,
 * whichever is larger, less their calls in flight. So when the cap fills, the
 * lowest class is refused first and the highest last, and calls of lower
 * classes already running never keep a higher class out (the calls in flight
 * may pass the limit while they end, never beyond twice it nor max-limit). A
 * class whose calls, with those of the classes above it, fit under the limit on
 * average is not shed for a burst: it may run up to three times the limit. A call
 * whose priority expression names no class (nothing, or an unknown word) is
 * in the default class.
 * <p>
 * A shed call is told to retry after a whole number of seconds drawn evenly
 * from {@code [retryAfter, retryAfter + retryAfterSpread]}, so that the callers
 * shed in one burst do not all come back in the same second.
 *
 * @param shares each class's guaranteed share of the limit, in percent (0 to 100, at most 100 in all);
 * a class not listed has none
 * @param defaultPriority the class of a call whose priority names no class
 * @param retryAfterMicros the shortest wait a shed call is told, in microseconds
 * @param retryAfterSpreadMicros how much longer the wait may be, in microseconds
 */
public record Shedding(Map<Priority, Integer> shares, Priority defaultPriority, long retryAfterMicros,
		long retryAfterSpreadMicros) {

	/**
	 * The shares when none are configured: 20% critical, 10% normal, 5%
	 * background, none sheddable. What a class keeps is held back from the classes
	 * below it while unused, so small shares waste little: sheddable calls alone
	 * may use 65% of the limit (and the limit grows while they run well).
	 */
	public static final Map<Priority, Integer> DEFAULT_SHARES = Map.of(Priority.CRITICAL, 20, Priority.NORMAL, 10,
			Priority.BACKGROUND, 5, Priority.SHEDDABLE, 0);

	/**
	 * Checks the settings and copies the shares.
	 */
	public Shedding {
		EnumMap<Priority, Integer> copy = new EnumMap<>(Priority.class);
		int total = 0;
		for (Map.Entry<Priority, Integer> share : shares.entrySet()) {
			Integer percent = share.getValue();
			if (percent == null || percent < 0 || percent > 100) {
				throw new PolicyValidationException("shares." + share.getKey().label(), percent,
						"must be a percentage from 0 to 100");
			}
			copy.put(share.getKey(), percent);
			total += percent;
		}
		if (total > 100) {
			throw new PolicyValidationException("shares", copy, "add up to " + total + "%, more than the whole limit");
		}
		shares = Map.copyOf(copy);
		if (defaultPriority == null) {
			throw new PolicyValidationException("default-priority", null,
					"must be critical, normal, background or sheddable");
		}
		if (retryAfterMicros < 1_000_000L) {
			throw new PolicyValidationException("retry-after", retryAfterMicros / 1000 + "ms",
					"must be at least 1s: Retry-After counts whole seconds");
		}
		if (retryAfterSpreadMicros < 0) {
			throw new PolicyValidationException("retry-after-spread", retryAfterSpreadMicros / 1000 + "ms",
					"must not be negative");
		}
	}

	/**
	 * Returns the defaults: {@link #DEFAULT_SHARES}, unknown callers in the lowest
	 * class (a caller cannot gain a higher class by sending a word nobody
	 * configured), told to come back after 1 to 5 seconds.
	 * @return the settings
	 */
	public static Shedding defaults() {
		return new Shedding(DEFAULT_SHARES, Priority.SHEDDABLE, 1_000_000L, 4_000_000L);
	}

	/**
	 * Returns these settings without shares: for a cap whose calls all fall in one
	 * class, which may then use the whole limit.
	 * @return the settings, every share 0
	 */
	public Shedding withoutShares() {
		return new Shedding(Map.of(), this.defaultPriority, this.retryAfterMicros, this.retryAfterSpreadMicros);
	}

	/**
	 * Returns a class's guaranteed share.
	 * @param priority the class
	 * @return its share of the limit, from 0 to 1
	 */
	public double share(Priority priority) {
		return this.shares.getOrDefault(priority, 0) / 100.0;
	}

	/**
	 * Returns the class a priority expression's value names.
	 * @param value the value; {@code null} when the expression yielded nothing
	 * @return the class it names, else the default class
	 */
	public Priority priorityOf(@Nullable String value) {
		Priority named = Priority.parse(value);
		return (named != null) ? named : this.defaultPriority;
	}

	/**
	 * Returns the wait to tell a shed call.
	 * @param uniform a uniform random number in [0, 1)
	 * @return whole seconds, in microseconds, within the configured spread
	 */
	public long retryAfterMicros(double uniform) {
		long seconds = this.retryAfterMicros / 1_000_000L;
		long spread = this.retryAfterSpreadMicros / 1_000_000L;
		return (seconds + (long) (uniform * (spread + 1))) * 1_000_000L;
	}

}
