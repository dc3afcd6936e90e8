package dev.ratelimit.core;

/**
 * The fixed window counter, mirrored in {@code META-INF/scripts/fixed_window.lua}:
 * at most {@code capacity} units per window, windows aligned to the epoch so
 * that every instance agrees where they start.
 * <p>
 * The state is kept in time, not in window numbers: when the window began
 * counting and when it ends, in µs. A policy's window size may change while a
 * key has counts (a plan switch, a refresh, an override), and a window number
 * {@code floor(now / size)} means nothing under another size. So the current
 * window keeps its count until its own end, and only then do windows of the new
 * size (aligned to the epoch) apply; a window that would end more than one new
 * window from now (the size shrank) ends with the new size's window holding
 * now instead. Either way a count is never forgotten before the window it was
 * counted in ends or the new size's current window does, and a key is never
 * held for longer than one new window. While the size does not change, this
 * decides exactly as window numbers did.
 */
final class FixedWindow extends LimitState {

	/** When the current window began counting; its receipts name it. */
	private long start = Long.MIN_VALUE;

	/** When the current window ends, exclusive; before every window at first. */
	private long end = Long.MIN_VALUE;

	private long count;

	FixedWindow() {
	}

	@Override
	public Decision decide(RateLimitPolicy policy, long cost, long nowMicros, boolean commit) {
		long size = policy.windowMicros();
		if (nowMicros >= this.end) {
			this.start = nowMicros;
			this.end = Math.floorDiv(nowMicros, size) * size + size;
			this.count = 0;
		}
		else if (nowMicros >= this.start && this.end - nowMicros > size) {
			// The size shrank: no longer than the new size's window holding now.
			this.end = Math.floorDiv(nowMicros, size) * size + size;
		}
		long untilNext = this.end - nowMicros;
		long counted = this.count + cost;
		if (counted > policy.capacity()) {
			return new Decision(false, policy.capacity() - this.count, policy.capacity(),
					(this.count > 0) ? untilNext : 0, untilNext);
		}
		if (commit) {
			this.count = counted;
		}
		return new Decision(true, policy.capacity() - counted, policy.capacity(), (counted > 0) ? untilNext : 0, 0);
	}

	/** The time the window the cost was counted in began counting, which no other window of this key shares. */
	@Override
	public long receipt(RateLimitPolicy policy, long cost, long nowMicros) {
		return this.start;
	}

	/** Uncounts the cost only in the window it was counted in; once that window has passed it counts no more. */
	@Override
	public void giveBack(RateLimitPolicy policy, long cost, long takenMicros, long nowMicros) {
		decide(policy, 0, nowMicros, false);
		if (this.start == takenMicros) {
			this.count = Math.max(this.count - cost, 0);
		}
	}

}
