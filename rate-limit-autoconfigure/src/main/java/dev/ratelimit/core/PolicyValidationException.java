package dev.ratelimit.core;

import org.jspecify.annotations.Nullable;

/**
 * Thrown when a policy is built from invalid values. Names the offending
 * attribute (in the kebab-case used by configuration properties) and the value,
 * so that callers can point at the exact property or annotation attribute.
 */
public class PolicyValidationException extends IllegalArgumentException {

	private final String attribute;

	private final transient @Nullable Object value;

	private final @Nullable String reason;

	/**
	 * Creates a new exception.
	 * @param attribute the invalid attribute, for example {@code capacity}
	 * @param value the rejected value, or {@code null} when none was set
	 * @param reason why the value is invalid, or {@code null} when a cause did not say
	 */
	public PolicyValidationException(String attribute, @Nullable Object value, @Nullable String reason) {
		super(attribute + " '" + value + "' is invalid: " + reason);
		this.attribute = attribute;
		this.value = value;
		this.reason = reason;
	}

	/**
	 * Returns the invalid attribute.
	 * @return the attribute name in kebab case
	 */
	public String getAttribute() {
		return this.attribute;
	}

	/**
	 * Returns the rejected value.
	 * @return the value, or {@code null} when none was set
	 */
	public @Nullable Object getValue() {
		return this.value;
	}

	/**
	 * Returns why the value is invalid.
	 * @return the reason, or {@code null} when a cause did not say
	 */
	public @Nullable String getReason() {
		return this.reason;
	}

}
