package dev.ratelimit.core;

/**
 * The leaky bucket as a meter (policing), mirrored in
 * {@code META-INF/scripts/leaky_bucket.lua}: each request pours {@code cost}
 * into a bucket of {@code capacity} that drains continuously at the refill
 * rate, and a request that would overflow it is rejected. The level is kept
 * scaled by the refill period, like {@link TokenBucket}'s tokens.
 * <p>
 * As a meter it admits exactly what a token bucket of the same numbers admits
 * (its level is the bucket's missing tokens); it is offered under the name
 * teams reason with, and its state reads as the backlog.
 */
final class LeakyBucket extends LimitState {

	private long scaledLevel;

	private long lastMicros;

	/**
	 * Creates the state of a new key, typed as {@link LimitState}: see {@link LimitState#create}.
	 * @param nowMicros the current time
	 * @return the state
	 */
	static LimitState newState(long nowMicros) {
		return new LeakyBucket(nowMicros);
	}

	LeakyBucket(long nowMicros) {
		this.lastMicros = nowMicros;
	}

	@Override
	public Decision decide(RateLimitPolicy policy, long cost, long nowMicros, boolean commit) {
		long perToken = policy.bucketRefill().periodMicros();
		long unitsPerMicro = policy.bucketRefill().tokens();
		long full = policy.capacity() * perToken;
		if (nowMicros > this.lastMicros) {
			long elapsed = nowMicros - this.lastMicros;
			this.scaledLevel = (elapsed >= LongMath.ceilDiv(this.scaledLevel, unitsPerMicro)) ? 0
					: this.scaledLevel - elapsed * unitsPerMicro;
			this.lastMicros = nowMicros;
		}
		long poured = this.scaledLevel + cost * perToken;
		if (poured > full) {
			long wait = LongMath.ceilDiv(poured - full, unitsPerMicro);
			// Wait mode: the bucket may overflow by what drains within max-wait.
			if (wait > policy.maxWaitMicros()) {
				return new Decision(false, Math.max(0, Math.floorDiv(full - this.scaledLevel, perToken)),
						policy.capacity(), LongMath.ceilDiv(this.scaledLevel, unitsPerMicro),
						wait - policy.maxWaitMicros());
			}
		}
		if (commit) {
			this.scaledLevel = poured;
		}
		long delay = (poured > full) ? LongMath.ceilDiv(poured - full, unitsPerMicro) : 0;
		return new Decision(true, Math.max(0, Math.floorDiv(full - poured, perToken)), policy.capacity(),
				LongMath.ceilDiv(poured, unitsPerMicro), 0, delay);
	}

	/** The earliest time the bucket could have been empty had the cost not been poured in. */
	@Override
	public long receipt(RateLimitPolicy policy, long cost, long nowMicros) {
		return nowMicros + Math.floorDiv(this.scaledLevel - cost * policy.bucketRefill().periodMicros(),
				policy.bucketRefill().tokens());
	}

	/**
	 * Lowers the level by the cost, never below empty; past the receipt's time
	 * the bucket without the cost may have run empty, losing drain, so each
	 * microsecond past it lowers the level by one microsecond of drain less
	 * (as {@link TokenBucket} does).
	 */
	@Override
	public void giveBack(RateLimitPolicy policy, long cost, long takenMicros, long nowMicros) {
		decide(policy, 0, nowMicros, false);
		long back = LongMath.lessLostSince(cost * policy.bucketRefill().periodMicros(), takenMicros, nowMicros,
				policy.bucketRefill().tokens());
		this.scaledLevel = Math.max(this.scaledLevel - back, 0);
	}

}
