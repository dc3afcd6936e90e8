package dev.ratelimit.core;

/**
 * The answer of one policy for one request: whether it is allowed, the quota
 * left, the policy's limit, when the quota is fully restored and how long to
 * wait before the same request could succeed. Times are microseconds relative
 * to the decision.
 *
 * @param allowed whether the request may proceed
 * @param remaining whole units of quota left after this decision
 * @param limit the policy's quota (its capacity)
 * @param resetAfterMicros time until the quota is fully restored; 0 when full
 * @param retryAfterMicros time until the same request could be allowed; 0 when allowed
 */
public record Decision(boolean allowed, long remaining, long limit, long resetAfterMicros, long retryAfterMicros) {

	/**
	 * Creates a decision, checking that its numbers are consistent.
	 */
	public Decision {
		if (remaining < 0 || limit < 0 || resetAfterMicros < 0 || retryAfterMicros < 0) {
			throw new IllegalArgumentException("negative value in decision: remaining=" + remaining + " limit="
					+ limit + " resetAfter=" + resetAfterMicros + " retryAfter=" + retryAfterMicros);
		}
	}

}
