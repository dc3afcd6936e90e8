package dev.ratelimit.core;

/**
 * The algorithm a {@link RateLimitPolicy} uses to decide.
 */
public enum Algorithm {

	/**
	 * Token bucket: holds up to {@code capacity} tokens, refilled continuously at
	 * the refill rate; a request takes {@code cost} tokens or is denied. Allows a
	 * burst of {@code capacity}, then the sustained refill rate.
	 */
	TOKEN_BUCKET

}
