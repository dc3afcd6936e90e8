package dev.ratelimit.web;

/**
 * The header fields of every refusal, whatever writes its body and on
 * whichever stack: {@code Retry-After} in whole seconds when a retry can
 * succeed, and {@code Cache-Control: no-store} (a refusal is this moment's,
 * never to be served from a cache). The one place they are written.
 */
public final class RefusalFields {

	/** The {@code Retry-After} field's name. */
	public static final String RETRY_AFTER = "Retry-After";

	/** The {@code Cache-Control} field's name. */
	public static final String CACHE_CONTROL = "Cache-Control";

	private RefusalFields() {
	}

	/**
	 * Writes a refusal's fields.
	 * @param rejection the refusal as the caller may be told about it
	 * @param target the response
	 * @param writer writes to it
	 * @param <T> the response's type
	 */
	public static <T> void write(Rejection rejection, T target, HeaderWriter<T> writer) {
		if (rejection.retryAfterSeconds() > 0) {
			writer.set(target, RETRY_AFTER, Long.toString(rejection.retryAfterSeconds()));
		}
		writer.set(target, CACHE_CONTROL, "no-store");
	}

}
