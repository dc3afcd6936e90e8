package dev.ratelimit.core;

/**
 * Whether a limit's state may be told to the caller: named in the response
 * header fields ({@code RateLimit-Policy}, {@code RateLimit},
 * {@code Budget-Remaining}) and in a refusal's problem body. The RateLimit
 * draft's security considerations ask servers not to disclose to untrusted
 * parties the operational capacity that can be used to saturate their
 * resources: a provider's rate shared by all tenants, and how much of it is
 * left right now, is exactly that.
 */
public enum Visibility {

	/**
	 * Told to the caller when the caller can act on it: the limit is keyed by the
	 * caller (any key but {@code global}) and enforced on the request itself (a
	 * route rule, or an annotation on the handler method, not on a service it
	 * calls).
	 */
	AUTO,

	/**
	 * Always told to the caller.
	 */
	PUBLIC,

	/**
	 * Never told to the caller: absent from the header fields, and a refusal it
	 * causes names no policy: a temporary reduction of the service's capacity,
	 * answered 503 rather than 429.
	 */
	INTERNAL;

	/**
	 * Parses an annotation attribute: {@code auto}, {@code public} or
	 * {@code internal}, in any case.
	 * @param text the text
	 * @return the visibility
	 * @throws PolicyValidationException if the text is none of those
	 */
	public static Visibility parse(String text) {
		for (Visibility candidate : values()) {
			if (candidate.name().equalsIgnoreCase(text.strip())) {
				return candidate;
			}
		}
		throw new PolicyValidationException("visibility", text, "use auto, public or internal");
	}

	/**
	 * Returns whether a limit with this visibility is told to the caller.
	 * @param keyExpression the limit's key expression in force
	 * @param onRequest whether the limit is enforced on the request itself
	 * @return whether to disclose it
	 */
	public boolean disclosed(String keyExpression, boolean onRequest) {
		return switch (this) {
			case PUBLIC -> true;
			case INTERNAL -> false;
			case AUTO -> onRequest && !"global".equals(keyExpression.strip());
		};
	}

}
