package dev.ratelimit.core;

import java.security.SecureRandom;

/**
 * SipHash-1-3 of a string's UTF-16 code units, under a secret random key: a
 * hash whose collisions an attacker cannot compute offline, for spreading keys
 * that callers choose over a few buckets. {@link String#hashCode()} would not
 * do: strings sharing it are easy to make ("Aa" and "BB"), and no seed mixed
 * in afterwards tells them apart.
 */
final class SeededHash {

	private final long k0;

	private final long k1;

	private SeededHash(long k0, long k1) {
		this.k0 = k0;
		this.k1 = k1;
	}

	/**
	 * Returns a hash under a key drawn from a {@link SecureRandom}: one per
	 * store, unknown outside the process.
	 * @return the hash
	 */
	static SeededHash random() {
		SecureRandom random = new SecureRandom();
		return new SeededHash(random.nextLong(), random.nextLong());
	}

	/**
	 * Hashes a string: four code units to a 64-bit word, the last word holding
	 * the length in its top 16 bits, as SipHash holds its input's length in its
	 * last byte.
	 * @param value the string
	 * @return the hash
	 */
	long hash(String value) {
		State state = new State(this.k0, this.k1);
		int length = value.length();
		int i = 0;
		for (; i + 4 <= length; i += 4) {
			state.compress(value.charAt(i) | (long) value.charAt(i + 1) << 16 | (long) value.charAt(i + 2) << 32
					| (long) value.charAt(i + 3) << 48);
		}
		long last = (long) length << 48;
		for (int shift = 0; i < length; i++, shift += 16) {
			last |= (long) value.charAt(i) << shift;
		}
		state.compress(last);
		return state.finish();
	}

	/** SipHash's four words of state. */
	private static final class State {

		private long v0;

		private long v1;

		private long v2;

		private long v3;

		State(long k0, long k1) {
			this.v0 = k0 ^ 0x736f6d6570736575L;
			this.v1 = k1 ^ 0x646f72616e646f6dL;
			this.v2 = k0 ^ 0x6c7967656e657261L;
			this.v3 = k1 ^ 0x7465646279746573L;
		}

		/** One compression round per word. */
		void compress(long word) {
			this.v3 ^= word;
			round();
			this.v0 ^= word;
		}

		/** Three finalization rounds. */
		long finish() {
			this.v2 ^= 0xff;
			round();
			round();
			round();
			return this.v0 ^ this.v1 ^ this.v2 ^ this.v3;
		}

		private void round() {
			this.v0 += this.v1;
			this.v1 = Long.rotateLeft(this.v1, 13) ^ this.v0;
			this.v0 = Long.rotateLeft(this.v0, 32);
			this.v2 += this.v3;
			this.v3 = Long.rotateLeft(this.v3, 16) ^ this.v2;
			this.v0 += this.v3;
			this.v3 = Long.rotateLeft(this.v3, 21) ^ this.v0;
			this.v2 += this.v1;
			this.v1 = Long.rotateLeft(this.v1, 17) ^ this.v2;
			this.v2 = Long.rotateLeft(this.v2, 32);
		}

	}

}
