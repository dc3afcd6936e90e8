package dev.ratelimit.autoconfigure;

import org.springframework.expression.ParseException;

import dev.ratelimit.core.PolicyValidationException;
import dev.ratelimit.core.RateLimitConfigurationException;
import dev.ratelimit.key.KeyExpressions;

/**
 * The start-up errors of the property binders, worded alike: the property, its
 * value, what is wrong, and to update it.
 */
final class InvalidProperty {

	private InvalidProperty() {
	}

	/**
	 * Returns the error for an invalid property value.
	 * @param property the full property name
	 * @param value the value
	 * @param reason what is wrong with it
	 * @param cause the underlying error, may be {@code null}
	 * @return the exception to throw
	 */
	static RateLimitConfigurationException of(String property, Object value, String reason, Throwable cause) {
		return new RateLimitConfigurationException(
				"Property " + property + " with value '" + value + "' is invalid: " + reason,
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
