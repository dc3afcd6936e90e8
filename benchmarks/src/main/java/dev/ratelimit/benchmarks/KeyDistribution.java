package dev.ratelimit.benchmarks;

import java.util.SplittableRandom;

/**
 * Precomputed key indices, so that drawing a key costs one array read and the
 * benchmark measures the limiter, not the random number generator.
 */
final class KeyDistribution {

	/** Length of every precomputed sequence; a power of two so a mask wraps it. */
	static final int LENGTH = 1 << 16;

	static final int MASK = LENGTH - 1;

	private KeyDistribution() {
	}

	/**
	 * Draws indices in {@code [0, keys)} with a Zipf distribution of exponent
	 * {@code s}: index 0 is the hottest key. With 10,000 keys and s = 1 the
	 * hottest key gets about 10% of calls and the top 100 keys about half.
	 * @param keys the number of keys
	 * @param s the exponent
	 * @param seed the random seed, fixed so every run draws the same sequence
	 * @return {@link #LENGTH} indices
	 */
	static int[] zipf(int keys, double s, long seed) {
		double[] cumulative = new double[keys];
		double sum = 0;
		for (int k = 0; k < keys; k++) {
			sum += 1.0 / Math.pow(k + 1, s);
			cumulative[k] = sum;
		}
		SplittableRandom random = new SplittableRandom(seed);
		int[] indices = new int[LENGTH];
		for (int i = 0; i < LENGTH; i++) {
			double u = random.nextDouble() * sum;
			int lo = 0;
			int hi = keys - 1;
			while (lo < hi) {
				int mid = (lo + hi) >>> 1;
				if (cumulative[mid] < u) {
					lo = mid + 1;
				}
				else {
					hi = mid;
				}
			}
			indices[i] = lo;
		}
		return indices;
	}

	/**
	 * Draws indices uniformly in {@code [0, keys)}.
	 * @param keys the number of keys
	 * @param seed the random seed
	 * @return {@link #LENGTH} indices
	 */
	static int[] uniform(int keys, long seed) {
		SplittableRandom random = new SplittableRandom(seed);
		int[] indices = new int[LENGTH];
		for (int i = 0; i < LENGTH; i++) {
			indices[i] = random.nextInt(keys);
		}
		return indices;
	}

}
