package dev.ratelimit.live;

/**
 * The {@link OverrideStore} did not take a change of an override (Redis did
 * not answer, say): nothing changed on this instance, and the change is not
 * shared with the others.
 */
public class OverrideStoreException extends RuntimeException {

	/**
	 * Creates the exception.
	 * @param message what was not kept, and that nothing changed
	 * @param cause the store's failure
	 */
	public OverrideStoreException(String message, Throwable cause) {
		super(message, cause);
	}

}
