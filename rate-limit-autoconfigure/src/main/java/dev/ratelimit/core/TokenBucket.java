package dev.ratelimit.core;

/**
 * The token bucket, mirrored in {@code META-INF/scripts/token_bucket.lua}.
 * <p>
 * Tokens are kept scaled by the refill period: with a refill of {@code n}
 * tokens per {@code P} µs, one token is {@code P} units and every elapsed
 * microsecond adds {@code n} units. No division happens on the state, so
 * nothing drifts however long a bucket lives, and the Lua copy (doubles, exact
 * below 2^53) reaches the same decisions bit for bit.
 * <p>
 * In wait mode ({@link RateLimitPolicy#maxWaitMicros()}) the tokens may go
 * negative: a caller whose tokens would be there within the bound takes them
 * now, which reserves its place, and is told how long to wait.
 */
final class TokenBucket extends LimitState {

	private long scaledTokens;

	private long lastMicros;

	/**
	 * Creates the state of a new key, typed as {@link LimitState}: see {@link LimitState#create}.
	 * @param policy the policy
	 * @param nowMicros the current time
	 * @return the state
	 */
	static LimitState newState(RateLimitPolicy policy, long nowMicros) {
		return new TokenBucket(policy, nowMicros);
	}

	TokenBucket(RateLimitPolicy policy, long nowMicros) {
		this.scaledTokens = policy.capacity() * policy.bucketRefill().periodMicros();
		this.lastMicros = nowMicros;
	}

	@Override
	public Decision decide(RateLimitPolicy policy, long cost, long nowMicros, boolean commit) {
		long perToken = policy.bucketRefill().periodMicros();
		long unitsPerMicro = policy.bucketRefill().tokens();
		long full = policy.capacity() * perToken;
		if (nowMicros > this.lastMicros) {
			long elapsed = nowMicros - this.lastMicros;
			long added = elapsed * unitsPerMicro;
			// Full once elapsed * rate reaches what is missing; a product past 2^63 (high half set, or
			// low half negative) surely does. Multiplying instead of dividing keeps a division off the
			// hot path; the Lua copy's elapsed >= ceil(missing / rate) is the same test.
			this.scaledTokens = (Math.multiplyHigh(elapsed, unitsPerMicro) != 0 || added < 0
					|| added >= full - this.scaledTokens) ? full : this.scaledTokens + added;
			this.lastMicros = nowMicros;
		}
		else if (this.scaledTokens > full) {
			// Kept under a larger quota (the key's plan or override changed, or it shares an overflow slot
			// with a key of another plan) and no time has passed: never more than this quota's bucket.
			this.scaledTokens = full;
		}
		long needed = cost * perToken;
		if (this.scaledTokens < needed) {
			long wait = LongMath.ceilDiv(needed - this.scaledTokens, unitsPerMicro);
			// Wait mode: a caller whose turn comes within max-wait takes its tokens now.
			if (wait > policy.maxWaitMicros()) {
				return new Decision(false, Math.max(0, Math.floorDiv(this.scaledTokens, perToken)), policy.capacity(),
						LongMath.ceilDiv(full - this.scaledTokens, unitsPerMicro), wait - policy.maxWaitMicros());
			}
		}
		long after = this.scaledTokens - needed;
		if (commit) {
			this.scaledTokens = after;
		}
		long delay = (after < 0) ? LongMath.ceilDiv(-after, unitsPerMicro) : 0;
		return new Decision(true, Math.max(0, Math.floorDiv(after, perToken)), policy.capacity(),
				LongMath.ceilDiv(full - after, unitsPerMicro), 0, delay);
	}

	/**
	 * The earliest time the bucket could have been full again had the tokens not
	 * been taken: until then no refill can have been lost to the capacity on
	 * their account.
	 */
	@Override
	public long receipt(RateLimitPolicy policy, long cost, long nowMicros) {
		long full = policy.capacity() * policy.bucketRefill().periodMicros();
		return nowMicros + Math.floorDiv(full - this.scaledTokens - cost * policy.bucketRefill().periodMicros(),
				policy.bucketRefill().tokens());
	}

	/**
	 * Tokens are interchangeable: they go back whoever took some since, capped at
	 * a full bucket. After the receipt's time the bucket without them may have
	 * been full, losing refill to the capacity, so each microsecond past it gives
	 * back one microsecond of refill less: a late give-back adds nothing the
	 * refill has not already restored.
	 */
	@Override
	public void giveBack(RateLimitPolicy policy, long cost, long takenMicros, long nowMicros) {
		decide(policy, 0, nowMicros, false);
		long back = LongMath.lessLostSince(cost * policy.bucketRefill().periodMicros(), takenMicros, nowMicros,
				policy.bucketRefill().tokens());
		long full = policy.capacity() * policy.bucketRefill().periodMicros();
		this.scaledTokens = Math.min(this.scaledTokens + back, full);
	}

}
