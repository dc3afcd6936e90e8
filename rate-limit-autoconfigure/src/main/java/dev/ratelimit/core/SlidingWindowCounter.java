package dev.ratelimit.core;

/**
 * The sliding window counter, mirrored in
 * {@code META-INF/scripts/sliding_window_counter.lua}: two fixed windows, and
 * the estimate {@code previous × (W − elapsed) / W + current} of what the
 * sliding window holds, {@code elapsed} being the time since the previous
 * window ended. Two counters per key; the estimate assumes the previous
 * window's requests were spread evenly, which is its only error.
 * <p>
 * The comparison is done multiplied by {@code W}, so it stays in integers.
 * <p>
 * The state is kept in time, not in window numbers, so that it survives a
 * change of the window size {@code W} (a plan switch, a refresh, an override):
 * when the current window began (which is when the previous one ended) and
 * when it ends, in µs. After a change:
 * <ul>
 * <li>the current window keeps its count until its own end, as
 * {@link FixedWindow} does; a window that would end more than one new window
 * from now (the size shrank) ends with the new size's window holding now;</li>
 * <li>the previous window's count always weighs with the size in force:
 * {@code previous × (W − elapsed) / W} while {@code elapsed < W}, then nothing.
 * It is counted as if spread over the {@code W} before the current window
 * began, so it stops weighing one new window after the previous window ended,
 * and never weighs more than all of it;</li>
 * <li>when the current window ends, it becomes the previous one if it ended
 * less than {@code W} ago, and the new current window runs from its end to the
 * end of the new size's epoch-aligned window holding now.</li>
 * </ul>
 * Nothing counted is forgotten before its window ends, and nothing weighs
 * longer than the window it was counted in plus one new window. While the size
 * does not change this decides exactly as window numbers did.
 */
final class SlidingWindowCounter extends LimitState {

	/** When the current window began counting, and the previous one ended; its receipts name it. */
	private long start = Long.MIN_VALUE;

	/** When the current window ends, exclusive; before every window at first. */
	private long end = Long.MIN_VALUE;

	/** When the previous window began counting; receipts name it. */
	private long previousStart = Long.MIN_VALUE;

	private long current;

	private long previous;

	SlidingWindowCounter() {
	}

	@Override
	public Decision decide(RateLimitPolicy policy, long cost, long nowMicros, boolean commit) {
		long size = policy.windowMicros();
		long capacity = policy.capacity();
		if (nowMicros >= this.end) {
			if (nowMicros < this.end + size) {
				this.previousStart = this.start;
				this.previous = this.current;
				this.start = this.end;
			}
			else {
				// Nothing counted still weighs; counting begins now.
				this.previousStart = Long.MIN_VALUE;
				this.previous = 0;
				this.start = nowMicros;
			}
			this.current = 0;
			this.end = Math.floorDiv(nowMicros, size) * size + size;
		}
		else if (nowMicros >= this.start && this.end - nowMicros > size) {
			// The size shrank: no longer than the new size's window holding now.
			this.end = Math.floorDiv(nowMicros, size) * size + size;
		}
		long start = this.start;
		long elapsed = Math.min(Math.max(nowMicros - start, 0), size);
		long weightedPrevious = this.previous * (size - elapsed);
		long counted = this.current + cost;
		if (weightedPrevious + counted * size > capacity * size) {
			long remaining = Math.max(0, Math.floorDiv(capacity * size - weightedPrevious - this.current * size, size));
			return new Decision(false, remaining, capacity, reset(this.current, start, size, elapsed, nowMicros),
					retryAfter(capacity, cost, size, elapsed, nowMicros));
		}
		if (commit) {
			this.current = counted;
		}
		long remaining = Math.floorDiv(capacity * size - weightedPrevious - counted * size, size);
		return new Decision(true, remaining, capacity, reset(counted, start, size, elapsed, nowMicros), 0);
	}

	/** The time the window the cost was counted in began counting, which no other window of this key shares. */
	@Override
	public long receipt(RateLimitPolicy policy, long cost, long nowMicros) {
		return this.start;
	}

	/**
	 * Uncounts the cost from the window it was counted in, whether that is still
	 * the current window or has become the previous one (where it still weighs on
	 * the estimate); older, it counts no more.
	 */
	@Override
	public void giveBack(RateLimitPolicy policy, long cost, long takenMicros, long nowMicros) {
		decide(policy, 0, nowMicros, false);
		if (this.start == takenMicros) {
			this.current = Math.max(this.current - cost, 0);
		}
		else if (this.previousStart == takenMicros) {
			this.previous = Math.max(this.previous - cost, 0);
		}
	}

	/** Time until nothing counted so far weighs on the estimate. */
	private long reset(long currentCount, long start, long size, long elapsed, long nowMicros) {
		if (currentCount > 0) {
			return this.end + size - nowMicros;
		}
		return (this.previous > 0 && elapsed < size) ? start + size - nowMicros : 0;
	}

	/** Earliest wait after which the estimate leaves room for {@code cost}. */
	private long retryAfter(long capacity, long cost, long size, long elapsed, long nowMicros) {
		long room = (capacity - cost) * size;
		// Later in this window, as the previous window's weight shrinks.
		long spare = room - this.current * size;
		if (spare >= 0 && this.previous > 0) {
			long weight = spare / this.previous;
			long wait = (size - weight) - elapsed;
			if (weight >= 1 && nowMicros + wait < this.end) {
				return wait;
			}
		}
		// In the next window, where this window's count becomes the previous one.
		long next = this.end - nowMicros;
		if (this.current == 0) {
			return next;
		}
		return next + Math.max(0, size - room / this.current);
	}

}
