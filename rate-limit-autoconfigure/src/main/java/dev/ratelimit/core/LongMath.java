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

	/**
	 * Returns the scaled units a bucket can still give back: all of them up to
	 * {@code deadline}, then {@code perMicro} fewer for each microsecond past it,
	 * never below 0. Mirrored by {@code lessLostSince} in {@code lib.lua}.
	 */
	static long lessLostSince(long units, long deadline, long nowMicros, long perMicro) {
		if (nowMicros <= deadline) {
			return units;
		}
		long late = nowMicros - deadline;
		// Compare times rather than multiply, so that a long delay cannot overflow.
		return (late >= ceilDiv(units, perMicro)) ? 0 : units - late * perMicro;
	}

}
