package dev.ratelimit.core;

/**
 * The sliding window counter, mirrored in
 * {@code META-INF/scripts/sliding_window_counter.lua}: two fixed windows, and
 * the estimate {@code previous × (W − elapsed) / W + current} of what the
 * sliding window holds. Two counters per key; the estimate assumes the previous
 * window's requests were spread evenly, which is its only error.
 * <p>
 * The comparison is done multiplied by {@code W}, so it stays in integers.
 */
final class SlidingWindowCounter extends LimitState {

	private long window = Long.MIN_VALUE;

	private long current;

	private long previous;

	SlidingWindowCounter() {
	}

	@Override
	public Decision decide(RateLimitPolicy policy, long cost, long nowMicros, boolean commit) {
		long size = policy.windowMicros();
		long capacity = policy.capacity();
		long index = Math.floorDiv(nowMicros, size);
		if (index == this.window + 1) {
			this.previous = this.current;
			this.current = 0;
			this.window = index;
		}
		else if (index > this.window) {
			this.previous = 0;
			this.current = 0;
			this.window = index;
		}
		long start = this.window * size;
		long elapsed = Math.min(Math.max(nowMicros - start, 0), size - 1);
		long weightedPrevious = this.previous * (size - elapsed);
		long counted = this.current + cost;
		if (weightedPrevious + counted * size > capacity * size) {
			long remaining = Math.max(0, Math.floorDiv(capacity * size - weightedPrevious - this.current * size, size));
			return new Decision(false, remaining, capacity, reset(this.current, start, size, nowMicros),
					retryAfter(capacity, cost, start, size, elapsed, nowMicros));
		}
		if (commit) {
			this.current = counted;
		}
		long remaining = Math.floorDiv(capacity * size - weightedPrevious - counted * size, size);
		return new Decision(true, remaining, capacity, reset(counted, start, size, nowMicros), 0);
	}

	/**
	 * Uncounts the cost from the window it was counted in, whether that is still
	 * the current window or has become the previous one (where it still weighs on
	 * the estimate); older, it counts no more.
	 */
	@Override
	public void giveBack(RateLimitPolicy policy, long cost, long takenMicros, long nowMicros) {
		decide(policy, 0, nowMicros, false);
		long taken = Math.floorDiv(takenMicros, policy.windowMicros());
		if (this.window == taken) {
			this.current = Math.max(this.current - cost, 0);
		}
		else if (this.window == taken + 1) {
			this.previous = Math.max(this.previous - cost, 0);
		}
	}

	/** Time until nothing counted so far weighs on the estimate. */
	private long reset(long currentCount, long start, long size, long nowMicros) {
		if (currentCount > 0) {
			return start + 2 * size - nowMicros;
		}
		return (this.previous > 0) ? start + size - nowMicros : 0;
	}

	/** Earliest wait after which the estimate leaves room for {@code cost}. */
	private long retryAfter(long capacity, long cost, long start, long size, long elapsed, long nowMicros) {
		long room = (capacity - cost) * size;
		// Later in this window, as the previous window's weight shrinks.
		long spare = room - this.current * size;
		if (spare >= 0 && this.previous > 0) {
			long weight = spare / this.previous;
			if (weight >= 1) {
				return (size - weight) - elapsed;
			}
		}
		// In the next window, where this window's count becomes the previous one.
		long next = start + size - nowMicros;
		if (this.current == 0) {
			return next;
		}
		return next + Math.max(0, size - room / this.current);
	}

}
