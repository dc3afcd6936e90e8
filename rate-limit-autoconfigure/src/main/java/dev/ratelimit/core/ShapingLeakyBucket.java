package dev.ratelimit.core;

/**
 * The leaky bucket as a queue (shaping), mirrored in
 * {@code META-INF/scripts/leaky_bucket_shaping.lua}: requests are served one
 * after another at the refill rate, each waiting for its turn, so the output is
 * perfectly smooth. Up to {@code capacity} units may wait; a request that would
 * queue beyond that is rejected.
 * <p>
 * The state is the time the queue drains, kept as whole microseconds plus a
 * remainder in {@code 1/n} µs, so that intervals such as a third of a second
 * stay exact without scaling the (large) absolute time.
 */
final class ShapingLeakyBucket extends LimitState {

	private long drainMicros;

	private long drainRemainder;

	/**
	 * Creates the state of a new key, typed as {@link LimitState}: see {@link LimitState#create}.
	 * @param nowMicros the current time
	 * @return the state
	 */
	static LimitState newState(long nowMicros) {
		return new ShapingLeakyBucket(nowMicros);
	}

	ShapingLeakyBucket(long nowMicros) {
		this.drainMicros = nowMicros;
	}

	@Override
	public Decision decide(RateLimitPolicy policy, long cost, long nowMicros, boolean commit) {
		long perToken = policy.bucketRefill().periodMicros();
		long unitsPerMicro = policy.bucketRefill().tokens();
		long full = policy.capacity() * perToken;
		// Work still queued, in units of 1/n microseconds.
		long backlog = 0;
		if (this.drainMicros > nowMicros || (this.drainMicros == nowMicros && this.drainRemainder > 0)) {
			backlog = (this.drainMicros - nowMicros) * unitsPerMicro + this.drainRemainder;
		}
		long delay = LongMath.ceilDiv(backlog, unitsPerMicro);
		long queued = backlog + cost * perToken;
		if (queued > full) {
			// A clock that stepped back can leave more queued than fits: report none left, not a negative.
			return new Decision(false, Math.max(0, full - backlog) / perToken, policy.capacity(), delay,
					LongMath.ceilDiv(queued - full, unitsPerMicro));
		}
		if (commit) {
			this.drainMicros = nowMicros + queued / unitsPerMicro;
			this.drainRemainder = queued % unitsPerMicro;
		}
		return new Decision(true, (full - queued) / perToken, policy.capacity(),
				LongMath.ceilDiv(queued, unitsPerMicro), 0, delay);
	}

}
