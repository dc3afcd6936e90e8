package dev.ratelimit.core;

import org.jspecify.annotations.Nullable;

/**
 * Base of the exceptions a limited call can end with. Each subtype maps to one
 * HTTP status in web applications; non-web callers catch them directly.
 */
public abstract class RateLimitException extends RuntimeException {

	/**
	 * Creates an exception.
	 * @param message the message
	 * @param cause the cause, may be {@code null}
	 */
	protected RateLimitException(String message, @Nullable Throwable cause) {
		super(message, cause);
	}

}
