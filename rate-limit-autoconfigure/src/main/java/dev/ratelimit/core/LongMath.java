package dev.ratelimit.core;

/**
 * Integer helpers missing from Java 17's {@link Math}.
 */
final class LongMath {

	private LongMath() {
	}

	/**
	 * Divides rounding towards positive infinity; {@code divisor} must be positive.
	 */
	static long ceilDiv(long dividend, long divisor) {
		return -Math.floorDiv(-dividend, divisor);
	}

}
