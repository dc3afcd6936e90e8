package dev.ratelimit.insight;

/**
 * One limit's heaviest keys over a recent window, in fixed memory: a
 * {@link SpaceSaving} sketch of refusals and one of units consumed, for the
 * window now and the one before it. A reading sums both windows, so it covers
 * between one and two windows of the past; a window older than that is
 * forgotten whole. Recording takes a short monitor and allocates nothing.
 * <p>
 * Each thread records in a {@link StripedTopKeys stripe} of its own, so the
 * monitor is uncontended; but taking it writes the object's header, and a
 * header within a cache line of what other threads read or write on every
 * decision costs each of them the line (two threads on one key paid over
 * 100 ns per decision for it). {@link Padded} ends with a line never written,
 * so the next stripe in memory (the collector copies a limit's stripes one
 * after the other) starts on a line of its own.
 */
sealed class TopKeys permits TopKeys.Padded {

	private final long windowNanos;

	private final SpaceSaving[] refusals;

	private final SpaceSaving[] units;

	/** Which of the two sketches of each pair is the window now. */
	private int current;

	private long windowStart;

	/**
	 * Creates the sketches.
	 * @param capacity the keys each sketch tracks
	 * @param windowNanos how long a window lasts
	 * @param now the time now, in nanoseconds
	 */
	private TopKeys(int capacity, long windowNanos, long now) {
		this.windowNanos = windowNanos;
		this.refusals = new SpaceSaving[] { new SpaceSaving(capacity), new SpaceSaving(capacity) };
		this.units = new SpaceSaving[] { new SpaceSaving(capacity), new SpaceSaving(capacity) };
		this.windowStart = now;
	}

	/**
	 * Counts a decision.
	 * @param key the key the call counted under
	 * @param consumed the units an allowed call consumed
	 * @param allowed whether the call was allowed (a refusal counts one refusal)
	 * @param now the time now, in nanoseconds
	 */
	synchronized void record(String key, long consumed, boolean allowed, long now) {
		rotate(now);
		if (!allowed) {
			this.refusals[this.current].add(key, 1);
		}
		else if (consumed > 0) {
			this.units[this.current].add(key, consumed);
		}
	}

	/**
	 * Adds the counts of both windows to tallies.
	 * @param now the time now, in nanoseconds
	 * @param refused refusals by key
	 * @param consumed units by key
	 */
	synchronized void addTo(long now, Tally refused, Tally consumed) {
		rotate(now);
		for (int i = 0; i < 2; i++) {
			this.refusals[i].addTo(refused);
			this.units[i].addTo(consumed);
		}
	}

	/** Starts a new window when the current one is over, forgetting the one before it. */
	private void rotate(long now) {
		long elapsed = now - this.windowStart;
		if (elapsed < this.windowNanos) {
			return;
		}
		int previous = 1 - this.current;
		this.refusals[previous].clear();
		this.units[previous].clear();
		if (elapsed >= 2 * this.windowNanos) {
			// Idle for two windows: nothing recent is left.
			this.refusals[this.current].clear();
			this.units[this.current].clear();
		}
		this.current = previous;
		this.windowStart = now - (elapsed % this.windowNanos);
	}

	/**
	 * A {@link TopKeys} followed by 64 bytes never read or written. (The JVM
	 * lays a superclass's fields out before a subclass's.)
	 */
	@SuppressWarnings("unused")
	static final class Padded extends TopKeys {

		private long p0;

		private long p1;

		private long p2;

		private long p3;

		private long p4;

		private long p5;

		private long p6;

		private long p7;

		Padded(int capacity, long windowNanos, long now) {
			super(capacity, windowNanos, now);
		}

	}

}
