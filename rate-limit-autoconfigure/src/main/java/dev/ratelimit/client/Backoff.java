package dev.ratelimit.client;

/**
 * Exponential backoff with full jitter: the n-th retry waits a uniformly random
 * time between zero and {@code min(max, base × 2^(n-1))}. Jitter over the whole
 * range, rather than around the exponential value, is what spreads callers
 * refused at the same instant over the window instead of moving their herd to a
 * later instant (see AWS' "Exponential Backoff And Jitter").
 */
public final class Backoff {

	private Backoff() {
	}

	/**
	 * Returns the ceiling of a retry's wait: {@code min(max, base × 2^(retry-1))}.
	 * @param retry the retry, from 1
	 * @param baseMicros the first retry's ceiling
	 * @param maxMicros the highest ceiling
	 * @return the ceiling in microseconds
	 */
	public static long ceilingMicros(int retry, long baseMicros, long maxMicros) {
		int doublings = Math.max(0, retry - 1);
		// Past 62 doublings any positive base has passed every ceiling a long can hold.
		if (doublings >= 62 || baseMicros > (maxMicros >> doublings)) {
			return maxMicros;
		}
		return Math.min(maxMicros, baseMicros << doublings);
	}

	/**
	 * Returns a retry's wait.
	 * @param retry the retry, from 1
	 * @param baseMicros the first retry's ceiling
	 * @param maxMicros the highest ceiling
	 * @param random a uniform random number in [0, 1)
	 * @return the wait in microseconds, in [0, ceiling)
	 */
	public static long fullJitterMicros(int retry, long baseMicros, long maxMicros, double random) {
		return (long) (ceilingMicros(retry, baseMicros, maxMicros) * random);
	}

}
