package dev.ratelimit.core;

/**
 * The answer of one policy for one request: whether it is allowed, the quota
 * left, the policy's limit, when the quota is fully restored, how long to wait
 * before the same request could succeed, and (for the shaping leaky bucket) how
 * long an allowed request must wait for its turn. Times are microseconds
 * relative to the decision.
 *
 * @param allowed whether the request may proceed
 * @param remaining whole units of quota left after this decision
 * @param limit the policy's quota (its capacity)
 * @param resetAfterMicros time until the quota is fully restored; 0 when full
 * @param retryAfterMicros time until the same request could be allowed; 0 when allowed
 * @param delayMicros time an allowed request waits for its turn before it
 * proceeds; 0 except for {@link Algorithm#LEAKY_BUCKET_SHAPING}
 */
public record Decision(boolean allowed, long remaining, long limit, long resetAfterMicros, long retryAfterMicros,
		long delayMicros) {

	/**
	 * Creates a decision, checking that its numbers are consistent.
	 */
	public Decision {
		if (remaining < 0 || limit < 0 || resetAfterMicros < 0 || retryAfterMicros < 0 || delayMicros < 0) {
			throw new IllegalArgumentException("negative value in decision: remaining=" + remaining + " limit="
					+ limit + " resetAfter=" + resetAfterMicros + " retryAfter=" + retryAfterMicros + " delay="
					+ delayMicros);
		}
	}

	/**
	 * Creates a decision without a delay.
	 * @param allowed whether the request may proceed
	 * @param remaining whole units of quota left
	 * @param limit the policy's quota
	 * @param resetAfterMicros time until the quota is fully restored
	 * @param retryAfterMicros time until the same request could be allowed
	 */
	public Decision(boolean allowed, long remaining, long limit, long resetAfterMicros, long retryAfterMicros) {
		this(allowed, remaining, limit, resetAfterMicros, retryAfterMicros, 0);
	}

}
