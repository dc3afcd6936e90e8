package dev.ratelimit.core;

/**
 * The fixed window counter, mirrored in {@code META-INF/scripts/fixed_window.lua}:
 * at most {@code capacity} units per window, windows aligned to the epoch so
 * that every instance agrees where they start.
 * <p>
 * The state is kept in time, not in window numbers: when the window began
 * counting, when it ends and when it last counted, in µs. A policy's window
 * size may change while a key has counts (a plan switch, a refresh, an
 * override), and a window number {@code floor(now / size)} means nothing under
 * another size. So the current window keeps its count until the earlier of
 * <ul>
 * <li>its own end, and</li>
 * <li>the end of the new size's window (aligned to the epoch) holding the last
 * time it counted,</li>
 * </ul>
 * and from then on windows of the new size apply. When the size grows (15m to
 * 1h) that is the old window's end; when it shrinks (1h to 15m) it is the end
 * of the new window the latest units fall in, so nothing is forgotten before
 * the new size's rules would forget it, and no key is held for longer than one
 * new window. The rule reads only the stored state and the time, so bringing a
 * state up to date still changes no decision. While the size does not change
 * this decides exactly as window numbers did.
 */
final class FixedWindow extends LimitState {

	/** When the current window began counting; its receipts name it. */
	private long start = Long.MIN_VALUE;

	/** When the current window ends, exclusive, under the size it began with; before every window at first. */
	private long end = Long.MIN_VALUE;

	/** The last time the current window counted (or began). */
	private long last = Long.MIN_VALUE;

	private long count;

	/**
	 * Creates the state of a new key, typed as {@link LimitState}: see {@link LimitState#create}.
	 * @return the state
	 */
	static LimitState newState() {
		return new FixedWindow();
	}

	FixedWindow() {
	}

	@Override
	public Decision decide(RateLimitPolicy policy, long cost, long nowMicros, boolean commit) {
		long size = policy.windowMicros();
		long end = (this.end != Long.MIN_VALUE) ? end(size) : Long.MIN_VALUE;
		if (nowMicros >= end) {
			this.start = nowMicros;
			this.last = nowMicros;
			this.end = Math.floorDiv(nowMicros, size) * size + size;
			this.count = 0;
			end = this.end;
		}
		long untilNext = end - nowMicros;
		long counted = this.count + cost;
		if (counted > policy.capacity()) {
			return new Decision(false, policy.capacity() - this.count, policy.capacity(),
					(this.count > 0) ? untilNext : 0, untilNext);
		}
		if (commit) {
			this.count = counted;
			this.last = Math.max(this.last, nowMicros);
		}
		return new Decision(true, policy.capacity() - counted, policy.capacity(), (counted > 0) ? untilNext : 0, 0);
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

	/** Uncounts the cost only in the window it was counted in; once that window has passed it counts no more. */
	@Override
	public void giveBack(RateLimitPolicy policy, long cost, long takenMicros, long nowMicros) {
		decide(policy, 0, nowMicros, false);
		if (this.start == takenMicros) {
			this.count = Math.max(this.count - cost, 0);
		}
	}

}
