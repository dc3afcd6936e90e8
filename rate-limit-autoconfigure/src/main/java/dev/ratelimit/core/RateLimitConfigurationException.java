package dev.ratelimit.core;

import org.jspecify.annotations.Nullable;

/**
 * Thrown at start-up when the rate-limit configuration is unusable: an invalid
 * policy property, an annotation naming an unknown policy, an unparsable
 * expression, or a backend that cannot be built. The application's failure
 * analyzer turns it into a message naming the property or method and the fix.
 */
public class RateLimitConfigurationException extends RuntimeException {

	private final String action;

	/**
	 * Creates an exception.
	 * @param description what is wrong and where (property or method)
	 * @param action what to do about it
	 * @param cause the underlying error, may be {@code null}
	 */
	public RateLimitConfigurationException(String description, String action, @Nullable Throwable cause) {
		super(description, cause);
		this.action = action;
	}

	/** @return what to do about the problem */
	public String getAction() {
		return this.action;
	}

}
