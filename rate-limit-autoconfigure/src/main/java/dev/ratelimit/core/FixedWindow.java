package dev.ratelimit.core;

/**
 * The fixed window counter, mirrored in {@code META-INF/scripts/fixed_window.lua}:
 * at most {@code capacity} units per window, windows aligned to the epoch so
 * that every instance agrees where they start.
 */
final class FixedWindow extends LimitState {

	private long window = Long.MIN_VALUE;

	private long count;

	FixedWindow() {
	}

	@Override
	public Decision decide(RateLimitPolicy policy, long cost, long nowMicros, boolean commit) {
		long size = policy.windowMicros();
		long current = Math.floorDiv(nowMicros, size);
		if (current > this.window) {
			this.window = current;
			this.count = 0;
		}
		long untilNext = (this.window + 1) * size - nowMicros;
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

	/** Uncounts the cost only in the window it was counted in; once that window has passed it counts no more. */
	@Override
	public void giveBack(RateLimitPolicy policy, long cost, long takenMicros, long nowMicros) {
		decide(policy, 0, nowMicros, false);
		if (this.window == Math.floorDiv(takenMicros, policy.windowMicros())) {
			this.count = Math.max(this.count - cost, 0);
		}
	}

}
