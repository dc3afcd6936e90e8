package dev.ratelimit.core;

/**
 * Thrown when a policy is built from invalid values. Names the offending
 * attribute (in the kebab-case used by configuration properties) and the value,
 * so that callers can point at the exact property or annotation attribute.
 */
public class PolicyValidationException extends IllegalArgumentException {

	private final String attribute;

	private final transient Object value;

	private final String reason;

	/**
	 * Creates a new exception.
	 * @param attribute the invalid attribute, for example {@code capacity}
	 * @param value the rejected value
	 * @param reason why the value is invalid
	 */
	public PolicyValidationException(String attribute, Object value, String reason) {
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
	 * @return the value
	 */
	public Object getValue() {
		return this.value;
	}

	/**
	 * Returns why the value is invalid.
	 * @return the reason
	 */
	public String getReason() {
		return this.reason;
	}

}
