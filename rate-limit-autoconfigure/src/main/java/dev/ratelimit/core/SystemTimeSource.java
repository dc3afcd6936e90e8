package dev.ratelimit.core;

/**
 * Monotonic microsecond clock anchored at wall-clock time when first used.
 */
final class SystemTimeSource implements TimeSource {

	static final SystemTimeSource INSTANCE = new SystemTimeSource();

	private final long originMicros = System.currentTimeMillis() * 1_000L;

	private final long originNanos = System.nanoTime();

	private SystemTimeSource() {
	}

	@Override
	public long currentTimeMicros() {
		return this.originMicros + (System.nanoTime() - this.originNanos) / 1_000L;
	}

}
