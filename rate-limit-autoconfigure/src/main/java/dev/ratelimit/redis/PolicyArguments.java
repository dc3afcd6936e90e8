package dev.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Refill;

/**
 * The script arguments of rate limit policies, as the bytes Redis receives:
 * algorithm, capacity, a, b and max wait (see {@code decide.lua}), and a token
 * bucket's policy as the one argument of {@code decide_token_bucket.lua}, are
 * the same for every decision of one policy, so they are encoded once per
 * policy object rather than formatted and encoded on every call.
 * <p>
 * A direct-mapped cache by identity, of {@value #SLOTS} slots: a policy whose
 * slot another took is encoded again, which gives the same bytes, so a miss
 * costs time and never changes a decision. Policies are immutable (a refresh
 * makes new ones), and an entry is only ever read whole: its fields are final,
 * so a racing reader sees either a complete entry or another one.
 */
final class PolicyArguments {

	private static final int SLOTS = 64;

	/** Digits of the costs most calls take, made once. */
	private static final byte[][] SMALL = new byte[256][];

	static {
		for (int i = 0; i < SMALL.length; i++) {
			SMALL[i] = Long.toString(i).getBytes(StandardCharsets.US_ASCII);
		}
	}

	private final Encoded[] slots = new Encoded[SLOTS];

	/**
	 * Returns a policy's unchanging arguments.
	 * @param policy the policy
	 * @return its arguments, encoded
	 */
	Encoded of(RateLimitPolicy policy) {
		int slot = System.identityHashCode(policy) & (SLOTS - 1);
		Encoded encoded = this.slots[slot];
		if (encoded == null || encoded.policy() != policy) {
			encoded = Encoded.of(policy);
			this.slots[slot] = encoded;
		}
		return encoded;
	}

	/**
	 * Returns a whole number's decimal digits.
	 * @param value the number
	 * @return its digits, ASCII
	 */
	static byte[] digits(long value) {
		return (value >= 0 && value < SMALL.length) ? SMALL[(int) value]
				: Long.toString(value).getBytes(StandardCharsets.US_ASCII);
	}

	/**
	 * Returns a text as UTF-8.
	 * @param text the text
	 * @return its bytes
	 */
	static byte[] utf8(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * One policy's arguments, each as {@code decide.lua} and {@code refund.lua}
	 * read them.
	 *
	 * @param policy the policy they were made from, compared by identity
	 * @param code the algorithm's code
	 * @param capacity the capacity
	 * @param a the refill's tokens for the buckets, the window's µs for the window counters
	 * @param b the refill's period in µs for the buckets, 0 for the window counters
	 * @param maxWait the max wait in µs
	 * @param tokenBucket for a token bucket, {@code "capacity a b maxWait"}, the
	 * policy as {@code decide_token_bucket.lua} reads it; {@code null} otherwise
	 */
	record Encoded(RateLimitPolicy policy, byte[] code, byte[] capacity, byte[] a, byte[] b, byte[] maxWait,
			byte @Nullable [] tokenBucket) {

		static Encoded of(RateLimitPolicy policy) {
			boolean rateBased = policy.algorithm().isRateBased();
			Refill refill = rateBased ? Objects.requireNonNull(policy.refill(), "a rate-based policy has one") : null;
			long a = (refill != null) ? refill.tokens() : policy.windowMicros();
			long b = (refill != null) ? refill.periodMicros() : 0;
			byte[] tokenBucket = (policy.algorithm() == Algorithm.TOKEN_BUCKET)
					? utf8(policy.capacity() + " " + a + " " + b + " " + policy.maxWaitMicros()) : null;
			return new Encoded(policy, utf8(code(policy)), digits(policy.capacity()), digits(a), digits(b),
					digits(policy.maxWaitMicros()), tokenBucket);
		}

		/**
		 * Puts algorithm, capacity, a, b, cost and max wait at {@code at}, as
		 * {@code decide.lua} reads them.
		 * @param args the arguments
		 * @param at where this policy's six begin
		 * @param cost the call's cost
		 * @return the index after them
		 */
		int put(byte[][] args, int at, long cost) {
			args[at] = this.code;
			args[at + 1] = this.capacity;
			args[at + 2] = this.a;
			args[at + 3] = this.b;
			args[at + 4] = digits(cost);
			args[at + 5] = this.maxWait;
			return at + 6;
		}

		private static String code(RateLimitPolicy policy) {
			return switch (policy.algorithm()) {
				case TOKEN_BUCKET -> "tb";
				case LEAKY_BUCKET -> "lb";
				case LEAKY_BUCKET_SHAPING -> "ls";
				case FIXED_WINDOW -> "fw";
				case SLIDING_WINDOW_LOG -> "sl";
				case SLIDING_WINDOW_COUNTER -> "sc";
			};
		}

	}

}
