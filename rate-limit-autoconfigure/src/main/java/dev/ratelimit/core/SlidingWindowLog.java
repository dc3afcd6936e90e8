package dev.ratelimit.core;

import java.util.Arrays;

/**
 * The sliding window log, mirrored in
 * {@code META-INF/scripts/sliding_window_log.lua}: every admitted request is
 * remembered with its time and cost, and a request is admitted only if the
 * costs admitted in the last window, plus its own, stay within
 * {@code capacity}. Exact, with no boundary burst; memory grows with the number
 * of requests in a window.
 */
final class SlidingWindowLog extends LimitState {

	// A ring buffer of (time, cost) in time order; grows as needed.
	private long[] times = new long[4];

	private long[] costs = new long[4];

	private int head;

	private int size;

	private long sum;

	/**
	 * Creates the state of a new key, typed as {@link LimitState}: see {@link LimitState#create}.
	 * @return the state
	 */
	static LimitState newState() {
		return new SlidingWindowLog();
	}

	SlidingWindowLog() {
	}

	@Override
	public Decision decide(RateLimitPolicy policy, long cost, long nowMicros, boolean commit) {
		long window = policy.windowMicros();
		while (this.size > 0 && this.times[this.head] + window <= nowMicros) {
			this.sum -= this.costs[this.head];
			this.head = (this.head + 1) % this.times.length;
			this.size--;
		}
		long counted = this.sum + cost;
		if (counted > policy.capacity()) {
			return new Decision(false, policy.capacity() - this.sum, policy.capacity(),
					newest() + window - nowMicros, retryAfter(counted - policy.capacity(), window, nowMicros));
		}
		if (commit && cost > 0) {
			append(nowMicros, cost);
			this.sum = counted;
		}
		long reset = (cost > 0) ? window : (this.size > 0) ? newest() + window - nowMicros : 0;
		return new Decision(true, policy.capacity() - counted, policy.capacity(), reset, 0);
	}

	/**
	 * Removes one entry of the call's time and cost, if it is still in the window:
	 * entries alike in both are interchangeable, so removing any one of them is
	 * removing the call's.
	 */
	@Override
	public void giveBack(RateLimitPolicy policy, long cost, long takenMicros, long nowMicros) {
		decide(policy, 0, nowMicros, false);
		for (int i = 0; i < this.size; i++) {
			int index = (this.head + i) % this.times.length;
			if (this.times[index] == takenMicros && this.costs[index] == cost) {
				remove(i);
				this.sum -= cost;
				return;
			}
		}
	}

	/** Removes the {@code i}-th entry from the head, keeping the others in time order. */
	private void remove(int i) {
		for (int j = i; j < this.size - 1; j++) {
			int to = (this.head + j) % this.times.length;
			int from = (this.head + j + 1) % this.times.length;
			this.times[to] = this.times[from];
			this.costs[to] = this.costs[from];
		}
		this.size--;
	}

	/** Time until the oldest entries, freeing at least {@code excess} units, leave the window. */
	private long retryAfter(long excess, long window, long nowMicros) {
		long freed = 0;
		for (int i = 0; i < this.size; i++) {
			int index = (this.head + i) % this.times.length;
			freed += this.costs[index];
			if (freed >= excess) {
				return this.times[index] + window - nowMicros;
			}
		}
		throw new IllegalStateException("cost above capacity reached the log");
	}

	private long newest() {
		return this.times[(this.head + this.size - 1) % this.times.length];
	}

	private void append(long time, long cost) {
		if (this.size == this.times.length) {
			long[] newTimes = new long[this.size * 2];
			long[] newCosts = new long[this.size * 2];
			for (int i = 0; i < this.size; i++) {
				newTimes[i] = this.times[(this.head + i) % this.size];
				newCosts[i] = this.costs[(this.head + i) % this.size];
			}
			this.times = newTimes;
			this.costs = newCosts;
			this.head = 0;
		}
		int tail = (this.head + this.size) % this.times.length;
		this.times[tail] = time;
		this.costs[tail] = cost;
		this.size++;
	}

	@Override
	public String toString() {
		return "SlidingWindowLog[size=" + this.size + ", sum=" + this.sum + ", head=" + this.head + ", capacity="
				+ Arrays.toString(new int[] { this.times.length }) + "]";
	}

}
