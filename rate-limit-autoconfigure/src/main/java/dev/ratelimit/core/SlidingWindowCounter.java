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
 * when the current window began (which is when the previous one ended), when
 * it ends under the size it began with, and when it last counted, in µs. After
 * a change:
 * <ul>
 * <li>the current window keeps its count until the earlier of its own end and
 * the end of the new size's epoch-aligned window holding its last count, as
 * {@link FixedWindow} does;</li>
 * <li>then it becomes the previous window, and the next one runs from its end
 * to the end of the new size's window holding that end; if that next window
 * has ended too, nothing counted weighs any more;</li>
 * <li>the previous window's count always weighs with the size in force,
 * {@code previous × (W − elapsed) / W} while {@code elapsed < W}, then nothing,
 * {@code elapsed} being the time since it ended: it is counted as if spread
 * evenly over the {@code W} before it ended, so it never weighs more than all
 * of it and stops weighing one new window after it ended.</li>
 * </ul>
 * So nothing counted is forgotten before the new size's rules would forget it,
 * and nothing weighs longer than one new window after its own window ended.
 * The rules read only the stored state and the time, so bringing a state up to
 * date still changes no decision, and while the size does not change this
 * decides exactly as window numbers did.
 */
final class SlidingWindowCounter extends LimitState {

	/** When the current window began counting, and the previous one ended; its receipts name it. */
	private long start = Long.MIN_VALUE;

	/** When the current window ends, exclusive, under the size it began with; before every window at first. */
	private long end = Long.MIN_VALUE;

	/** The last time the current window counted (or began). */
	private long last = Long.MIN_VALUE;

	/** When the previous window began counting; receipts name it. */
	private long previousStart = Long.MIN_VALUE;

	private long current;

	private long previous;

	/**
	 * Creates the state of a new key, typed as {@link LimitState}: see {@link LimitState#create}.
	 * @return the state
	 */
	static LimitState newState() {
		return new SlidingWindowCounter();
	}

	SlidingWindowCounter() {
	}

	@Override
	public Decision decide(RateLimitPolicy policy, long cost, long nowMicros, boolean commit) {
		long size = policy.windowMicros();
		long capacity = policy.capacity();
		long end = (this.end != Long.MIN_VALUE) ? end(size) : Long.MIN_VALUE;
		if (nowMicros >= end) {
			// The window after the one that ended: up to the new size's window holding its end.
			long next = (end != Long.MIN_VALUE) ? Math.floorDiv(end, size) * size + size : Long.MIN_VALUE;
			if (nowMicros < next) {
				this.previousStart = this.start;
				this.previous = this.current;
				this.start = end;
				this.end = next;
			}
			else {
				// Nothing counted still weighs; counting begins now.
				this.previousStart = Long.MIN_VALUE;
				this.previous = 0;
				this.start = nowMicros;
				this.end = Math.floorDiv(nowMicros, size) * size + size;
			}
			this.last = this.start;
			this.current = 0;
			end = this.end;
		}
		long start = this.start;
		long elapsed = Math.min(Math.max(nowMicros - start, 0), size);
		long weightedPrevious = this.previous * (size - elapsed);
		long counted = this.current + cost;
		if (weightedPrevious + counted * size > capacity * size) {
			long remaining = Math.max(0, Math.floorDiv(capacity * size - weightedPrevious - this.current * size, size));
			return new Decision(false, remaining, capacity, reset(this.current, start, end, size, elapsed, nowMicros),
					retryAfter(capacity, cost, end, size, elapsed, nowMicros));
		}
		if (commit) {
			this.current = counted;
			this.last = Math.max(this.last, nowMicros);
		}
		long remaining = Math.floorDiv(capacity * size - weightedPrevious - counted * size, size);
		return new Decision(true, remaining, capacity, reset(counted, start, end, size, elapsed, nowMicros), 0);
	}

	/**
	 * When the current window ends under {@code size}: its own end, or sooner
	 * when the size shrank, the end of the new size's window holding its last
	 * count. Both are the same while the size does not change.
	 */
	private long end(long size) {
		return Math.min(this.end, Math.floorDiv(this.last, size) * size + size);
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
	private long reset(long currentCount, long start, long end, long size, long elapsed, long nowMicros) {
		if (currentCount > 0) {
			return end + size - nowMicros;
		}
		return (this.previous > 0 && elapsed < size) ? start + size - nowMicros : 0;
	}

	/** Earliest wait after which the estimate leaves room for {@code cost}. */
	private long retryAfter(long capacity, long cost, long end, long size, long elapsed, long nowMicros) {
		long room = (capacity - cost) * size;
		// Later in this window, as the previous window's weight shrinks.
		long spare = room - this.current * size;
		if (spare >= 0 && this.previous > 0) {
			long weight = spare / this.previous;
			long wait = (size - weight) - elapsed;
			if (weight >= 1 && nowMicros + wait < end) {
				return wait;
			}
		}
		// In the next window, where this window's count becomes the previous one.
		long next = end - nowMicros;
		if (this.current == 0) {
			return next;
		}
		return next + Math.max(0, size - room / this.current);
	}

}
