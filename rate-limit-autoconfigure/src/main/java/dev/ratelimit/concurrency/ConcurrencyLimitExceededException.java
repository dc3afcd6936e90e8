package dev.ratelimit.concurrency;

import dev.ratelimit.core.RateLimitException;

/**
 * Thrown when no permit of a concurrency cap freed within the caller's wait:
 * HTTP 429, or 503 for a cap the caller may not see or one that protects a
 * shared downstream.
 */
public class ConcurrencyLimitExceededException extends RateLimitException {

	private final transient ConcurrencyPolicy policy;

	private final long retryAfterMicros;

	/**
	 * Creates an exception.
	 * @param policy the policy
	 * @param retryAfterMicros a hint of when a permit could be free (at least one second is sent)
	 */
	public ConcurrencyLimitExceededException(ConcurrencyPolicy policy, long retryAfterMicros) {
		this(policy, retryAfterMicros, "All " + policy.permits() + " permits of concurrency policy '" + policy.name()
				+ "' are in use"
				+ ((policy.maxWaitMicros() > 0) ? " after waiting " + policy.maxWaitMicros() / 1000 + " ms" : ""));
	}

	/**
	 * Creates an exception with a message of a subclass's.
	 * @param policy the policy
	 * @param retryAfterMicros a hint of when a permit could be free
	 * @param message the message
	 */
	protected ConcurrencyLimitExceededException(ConcurrencyPolicy policy, long retryAfterMicros, String message) {
		super(message, null);
		this.policy = policy;
		this.retryAfterMicros = Math.max(0, retryAfterMicros);
	}

	/** @return the policy */
	public ConcurrencyPolicy getPolicy() {
		return this.policy;
	}

	/** @return when a permit could be free, in microseconds */
	public long getRetryAfterMicros() {
		return this.retryAfterMicros;
	}

}
