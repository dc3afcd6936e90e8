package dev.ratelimit.core;

/**
 * Source of the current time in microseconds, injected wherever a limiter needs
 * "now" so that tests can move time by hand instead of sleeping.
 * <p>
 * Only differences between readings matter to the in-memory backend, so the
 * value need not be wall-clock time; it must never go backwards.
 */
@FunctionalInterface
public interface TimeSource {

	/**
	 * Returns the current time in microseconds.
	 * @return a reading that never decreases between calls
	 */
	long currentTimeMicros();

	/**
	 * Returns the system time source: wall-clock time at start-up advanced by the
	 * monotonic {@link System#nanoTime()}, so that a clock adjustment of the host
	 * can neither refill nor drain a bucket.
	 * @return the shared system time source
	 */
	static TimeSource system() {
		return SystemTimeSource.INSTANCE;
	}

}
