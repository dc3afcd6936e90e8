package dev.ratelimit.insight;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * One limit's {@link TopKeys} in stripes, so that threads deciding the same
 * limit at once do not wait for one monitor: a thread counts in its own
 * stripe (handed out in turn, the same for every limit), and a reading sums
 * every stripe (a sum of Space-Saving summaries is a summary of the whole
 * stream, its errors added). With one monitor, two
 * threads deciding one limit over 10,000 keys paid several hundred
 * nanoseconds per decision waiting for each other.
 */
final class StripedTopKeys {

	/** Stripes per limit: a power of two, twice the processors, at most 16. */
	static final int STRIPES = Math.min(16,
			Integer.highestOneBit(Math.max(1, Runtime.getRuntime().availableProcessors() * 2 - 1)) << 1);

	/** Each thread's stripe, handed out in turn: two threads share one only when there are more threads than stripes. */
	private static final AtomicInteger NEXT = new AtomicInteger();

	private static final ThreadLocal<Integer> STRIPE = ThreadLocal
		.withInitial(() -> NEXT.getAndIncrement() & (STRIPES - 1));

	/**
	 * Slots never used at the end of {@link #stripes}: every decision reads the
	 * array, and the stripe allocated (or copied by the collector) right after
	 * it must not share a cache line with it, or its owner's monitor would take
	 * the line from every other thread (64 bytes, whatever the reference size).
	 */
	private static final int UNUSED_SLOTS = 16;

	private final TopKeys[] stripes = new TopKeys[STRIPES + UNUSED_SLOTS];

	/**
	 * Creates the stripes.
	 * @param capacity the keys each sketch of a stripe tracks
	 * @param windowNanos how long a window lasts
	 * @param now the time now, in nanoseconds: every stripe's windows start together
	 */
	StripedTopKeys(int capacity, long windowNanos, long now) {
		for (int i = 0; i < STRIPES; i++) {
			this.stripes[i] = new TopKeys.Padded(capacity, windowNanos, now);
		}
	}

	/**
	 * Counts a decision in the calling thread's stripe.
	 * @param key the key the call counted under
	 * @param consumed the units an allowed call consumed
	 * @param allowed whether the call was allowed
	 * @param now the time now, in nanoseconds
	 */
	void record(String key, long consumed, boolean allowed, long now) {
		this.stripes[STRIPE.get()].record(key, consumed, allowed, now);
	}

	/**
	 * Reads every stripe's counts of the last one to two windows.
	 * @param now the time now, in nanoseconds
	 * @param refused refusals by key, added to
	 * @param consumed units by key, added to
	 */
	void addTo(long now, Tally refused, Tally consumed) {
		for (int i = 0; i < STRIPES; i++) {
			this.stripes[i].addTo(now, refused, consumed);
		}
	}

}
