package dev.ratelimit.core;

/**
 * The token bucket in exact integer arithmetic, shared by the in-memory backend
 * and mirrored line by line in {@code META-INF/scripts/token_bucket.lua}.
 * <p>
 * Tokens are kept scaled by the refill period: with a refill of {@code n}
 * tokens per {@code P} µs, one token is {@code P} units and every elapsed
 * microsecond adds {@code n} units. No division happens on the state, so
 * nothing drifts however long a bucket lives, and the Lua copy (doubles, exact
 * below 2^53) reaches the same decisions bit for bit.
 */
public final class TokenBucket {

	private TokenBucket() {
	}

	/**
	 * Mutable state of one bucket. Callers guard it with their own lock.
	 */
	public static final class State {

		long scaledTokens;

		long lastMicros;

		/**
		 * Creates the state of a full bucket.
		 * @param policy the policy the bucket belongs to
		 * @param nowMicros the current time
		 */
		public State(RateLimitPolicy policy, long nowMicros) {
			this.scaledTokens = scaledCapacity(policy);
			this.lastMicros = nowMicros;
		}

	}

	/**
	 * Refills the bucket up to {@code nowMicros} and takes {@code cost} tokens if
	 * it holds that many.
	 * @param policy the policy
	 * @param state the bucket, mutated in place
	 * @param cost tokens to take, {@code 0 <= cost <= capacity}
	 * @param nowMicros the current time; an earlier time than the last one refills nothing
	 * @return the decision
	 */
	public static Decision consume(RateLimitPolicy policy, State state, long cost, long nowMicros) {
		long perToken = policy.refill().periodMicros();
		long unitsPerMicro = policy.refill().tokens();
		long full = scaledCapacity(policy);
		if (nowMicros > state.lastMicros) {
			long elapsed = nowMicros - state.lastMicros;
			// Compare times rather than multiply first, so elapsed * rate cannot overflow.
			state.scaledTokens = (elapsed >= LongMath.ceilDiv(full - state.scaledTokens, unitsPerMicro)) ? full
					: state.scaledTokens + elapsed * unitsPerMicro;
			state.lastMicros = nowMicros;
		}
		long needed = cost * perToken;
		boolean allowed = state.scaledTokens >= needed;
		long retryAfter = 0;
		if (allowed) {
			state.scaledTokens -= needed;
		}
		else {
			retryAfter = LongMath.ceilDiv(needed - state.scaledTokens, unitsPerMicro);
		}
		long resetAfter = LongMath.ceilDiv(full - state.scaledTokens, unitsPerMicro);
		return new Decision(allowed, state.scaledTokens / perToken, policy.capacity(), resetAfter, retryAfter);
	}

	static long scaledCapacity(RateLimitPolicy policy) {
		return policy.capacity() * policy.refill().periodMicros();
	}

}
