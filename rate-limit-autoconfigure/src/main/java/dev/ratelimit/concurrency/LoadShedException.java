package dev.ratelimit.concurrency;

/**
 * Thrown when an adaptive cap sheds a call: the service is near overload and
 * the call's class is beyond its share. A server condition, not the caller's
 * quota: HTTP 503 with a {@code Retry-After} spread over a few seconds, naming
 * no limit.
 */
public class LoadShedException extends ConcurrencyLimitExceededException {

	private final Priority priority;

	private final int limit;

	/**
	 * Creates an exception.
	 * @param policy the adaptive cap
	 * @param priority the shed call's class
	 * @param limit the cap's limit when it shed the call
	 * @param retryAfterMicros when to come back, jittered
	 */
	public LoadShedException(ConcurrencyPolicy policy, Priority priority, int limit, long retryAfterMicros) {
		super(policy, retryAfterMicros, "Adaptive concurrency cap '" + policy.name() + "' shed a " + priority.label()
				+ " call: its limit of " + limit + " calls in flight is reached");
		this.priority = priority;
		this.limit = limit;
	}

	/** @return the shed call's class */
	public Priority getPriority() {
		return this.priority;
	}

	/** @return the cap's limit when it shed the call */
	public int getLimit() {
		return this.limit;
	}

}
