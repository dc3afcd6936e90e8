package dev.ratelimit.live;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.lang.Contract;

import dev.ratelimit.budget.Amounts;
import dev.ratelimit.core.Durations;
import dev.ratelimit.core.PolicyValidationException;
import dev.ratelimit.core.Quota;
import dev.ratelimit.core.Refill;

/**
 * A quota as text, in the syntax of the properties, for the endpoint's input
 * and for stores: {@code capacity=50;refill=10/1s}, {@code window=1m},
 * {@code amount=2.5}, {@code permits=4}. Parsing checks the syntax of each
 * number; whether the limit's kind has it, and accepts its value, is the
 * kind's {@code withQuota} to say.
 */
public final class QuotaText {

	private static final Set<String> NAMES = Set.of("capacity", "refill", "window", "amount", "permits");

	private QuotaText() {
	}

	/**
	 * Builds a quota from its numbers as text; a {@code null} or blank number is not set.
	 * @param capacity a rate limit's capacity
	 * @param refill a rate limit's refill, such as {@code 10/1s}
	 * @param window a rate limit's window, such as {@code 1m}
	 * @param amount a budget's amount in units, such as {@code 2.5}
	 * @param permits a concurrency cap's permits
	 * @return the quota
	 * @throws PolicyValidationException naming the first number that does not parse, or no number at all
	 */
	public static Quota of(@Nullable String capacity, @Nullable String refill, @Nullable String window,
			@Nullable String amount, @Nullable String permits) {
		Quota quota = new Quota(wholeNumber("capacity", capacity), isSet(refill) ? Refill.parse(refill.strip()) : null,
				isSet(window) ? Durations.parseMicros("window", window.strip()) : null, amount(amount),
				permits(permits));
		if (quota.isEmpty()) {
			throw new PolicyValidationException("quota", null,
					"set at least one of capacity, refill, window, amount or permits");
		}
		return quota;
	}

	/**
	 * Writes a quota as {@code name=value} pairs separated by {@code ;}.
	 * @param quota the quota
	 * @return the text
	 */
	public static String format(Quota quota) {
		StringBuilder text = new StringBuilder();
		quota.numbers().forEach((name, value) -> {
			if (!text.isEmpty()) {
				text.append(';');
			}
			text.append(name).append('=').append(value);
		});
		return text.toString();
	}

	/**
	 * Reads what {@link #format} writes.
	 * @param text the text
	 * @return the quota
	 * @throws IllegalArgumentException if the text is not a quota
	 */
	public static Quota parse(String text) {
		Map<String, String> numbers = new LinkedHashMap<>();
		for (String pair : text.split(";", -1)) {
			int equals = pair.indexOf('=');
			if (equals <= 0 || numbers.put(pair.substring(0, equals).strip(), pair.substring(equals + 1)) != null) {
				throw new IllegalArgumentException("'" + pair + "' is not a name=value pair of its own");
			}
		}
		for (String name : numbers.keySet()) {
			if (!NAMES.contains(name)) {
				throw new IllegalArgumentException("'" + name + "' is not a number of a quota");
			}
		}
		return of(numbers.get("capacity"), numbers.get("refill"), numbers.get("window"), numbers.get("amount"),
				numbers.get("permits"));
	}

	@Contract("null -> false")
	private static boolean isSet(@Nullable String text) {
		return text != null && !text.isBlank();
	}

	private static @Nullable Long wholeNumber(String name, @Nullable String text) {
		if (!isSet(text)) {
			return null;
		}
		try {
			return Long.valueOf(text.strip());
		}
		catch (NumberFormatException ex) {
			throw new PolicyValidationException(name, text, "must be a whole number");
		}
	}

	private static @Nullable Integer permits(@Nullable String text) {
		Long permits = wholeNumber("permits", text);
		if (permits != null && (permits < Integer.MIN_VALUE || permits > Integer.MAX_VALUE)) {
			throw new PolicyValidationException("permits", text, "is too large");
		}
		return (permits != null) ? permits.intValue() : null;
	}

	private static @Nullable Long amount(@Nullable String text) {
		if (!isSet(text)) {
			return null;
		}
		try {
			return Amounts.parseMicros(text);
		}
		catch (IllegalArgumentException ex) {
			throw new PolicyValidationException("amount", text, ex.getMessage());
		}
	}

}
