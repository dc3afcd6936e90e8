package dev.ratelimit.core;

/**
 * The algorithm a {@link RateLimitPolicy} uses to decide. Every algorithm takes
 * a per-request cost and decides identically on every backend.
 */
public enum Algorithm {

	/**
	 * Token bucket: holds up to {@code capacity} tokens, refilled continuously at
	 * the refill rate; a request takes {@code cost} tokens or is denied. A burst of
	 * {@code capacity}, then the sustained rate. The default.
	 */
	TOKEN_BUCKET(true),

	/**
	 * Fixed window: at most {@code capacity} per window, counted from window
	 * boundaries aligned to the epoch. Cheapest; allows up to twice the limit
	 * across a boundary.
	 */
	FIXED_WINDOW(false),

	/**
	 * Sliding window log: at most {@code capacity} in any window-long interval,
	 * exactly, by remembering every admitted request. Memory grows with the limit.
	 */
	SLIDING_WINDOW_LOG(false),

	/**
	 * Sliding window counter: the previous window's count, weighted by how much of
	 * it still overlaps the sliding window, plus the current window's count. Two
	 * counters per key, close to the exact log.
	 */
	SLIDING_WINDOW_COUNTER(false),

	/**
	 * Leaky bucket, policing variant (a meter): each request pours {@code cost}
	 * into a bucket of {@code capacity} that drains at the refill rate; a request
	 * that would overflow it is rejected.
	 */
	LEAKY_BUCKET(true),

	/**
	 * Leaky bucket, shaping variant (a queue): requests are given consecutive
	 * turns at the refill rate and wait for theirs, so the output is perfectly
	 * smooth; a request whose turn is more than {@code capacity} turns away is
	 * rejected.
	 */
	LEAKY_BUCKET_SHAPING(true);

	private final boolean rateBased;

	Algorithm(boolean rateBased) {
		this.rateBased = rateBased;
	}

	/**
	 * Returns whether the algorithm is configured with a refill rate (buckets)
	 * rather than a window.
	 * @return {@code true} for the buckets, {@code false} for the windows
	 */
	public boolean isRateBased() {
		return this.rateBased;
	}

}
