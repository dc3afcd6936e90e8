package dev.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.expression.ParseException;

import dev.ratelimit.core.Durations;
import dev.ratelimit.core.PolicyValidationException;
import dev.ratelimit.core.RateLimitConfigurationException;
import dev.ratelimit.key.KeyExpressions;

/**
 * The start-up errors of the property checks, worded alike: the property, its
 * value, what is wrong, and to update it.
 */
final class InvalidProperty {

	private InvalidProperty() {
	}

	/**
	 * Returns the error for an invalid property value.
	 * @param property the full property name
	 * @param value the value, or {@code null} when it is not set
	 * @param reason what is wrong with it, or {@code null} when an underlying error did not say
	 * @param cause the underlying error, may be {@code null}
	 * @return the exception to throw
	 */
	static RateLimitConfigurationException of(String property, @Nullable Object value, @Nullable String reason,
			@Nullable Throwable cause) {
		return new RateLimitConfigurationException(
				"Property " + property + " with value '" + text(value) + "' is invalid: " + reason,
				"Update " + property + " in your configuration.", cause);
	}

	/**
	 * Returns the error for a value a builder rejected, naming the property from
	 * the builder's attribute.
	 * @param prefix the properties' prefix, ending with a dot
	 * @param ex the builder's error
	 * @return the exception to throw
	 */
	static RateLimitConfigurationException of(String prefix, PolicyValidationException ex) {
		String property = "name".equals(ex.getAttribute()) ? prefix.substring(0, prefix.length() - 1)
				: prefix + ex.getAttribute();
		return of(property, ex.getValue(), ex.getReason(), ex);
	}

	/**
	 * Returns one error for several, so that every invalid property is reported
	 * at once: the single error itself, or a list of their descriptions.
	 * @param problems the errors, at least one
	 * @return the exception to throw
	 */
	static RateLimitConfigurationException all(List<RateLimitConfigurationException> problems) {
		if (problems.size() == 1) {
			return problems.get(0);
		}
		StringBuilder description = new StringBuilder(problems.size() + " rate-limit properties are invalid:");
		for (RateLimitConfigurationException problem : problems) {
			description.append(System.lineSeparator()).append("  - ").append(problem.getMessage());
		}
		String action = String.join(System.lineSeparator(),
				problems.stream().map(RateLimitConfigurationException::getAction).distinct().toList());
		RateLimitConfigurationException all = new RateLimitConfigurationException(description.toString(), action,
				problems.get(0));
		problems.stream().skip(1).forEach(all::addSuppressed);
		return all;
	}

	/** A value as it is written in properties: durations as {@code 500ms} or {@code -1s}, not {@code PT0.5S}. */
	private static @Nullable Object text(@Nullable Object value) {
		if (value instanceof Duration duration) {
			return duration.isZero() ? "0s" : Durations.format(duration.toNanos() / 1_000L);
		}
		return value;
	}

	/**
	 * Parses a key expression property, failing with the property's name.
	 * @param expressions the parser
	 * @param property the full property name
	 * @param key the expression
	 */
	static void checkKey(KeyExpressions expressions, String property, String key) {
		try {
			expressions.parse(key);
		}
		catch (ParseException ex) {
			throw of(property, key, "not a valid expression: " + ex.getMessage()
					+ "; use ip, principal, global, header('Name') or another SpEL expression", ex);
		}
	}

}
