package dev.ratelimit.web;

/**
 * The RFC 9457 problem types of the HTTP contract's refusals, the same on
 * every stack.
 */
public final class ProblemTypes {

	/** Problem type of a caller over a limit of its own, answered with 429. */
	public static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

	/**
	 * Problem type of the service short of capacity, answered with 503: a refusal
	 * by limits the caller may not see (shared capacity), a shared downstream
	 * saturated or paused, or a limiter that cannot decide.
	 */
	public static final String TEMPORARY_REDUCED_CAPACITY = "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity";

	private ProblemTypes() {
	}

}
