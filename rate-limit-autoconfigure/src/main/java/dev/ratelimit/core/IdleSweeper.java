package dev.ratelimit.core;

import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongConsumer;

/**
 * Runs an in-memory store's sweep of keys that are fresh again (see
 * {@link KeyBound}) at most once per interval of the store's clock, one
 * thread at a time. Stores call {@link #sweepIfDue} on inserts only: without
 * inserts a store cannot grow, so its idle keys can wait. A thread that finds a
 * sweep under way goes on without waiting for it.
 */
public final class IdleSweeper {

	private final ReentrantLock lock = new ReentrantLock();

	private final long intervalMicros;

	private final LongConsumer sweep;

	/** When the next sweep is due: read by every insert, written by the sweeper. */
	private volatile long nextMicros;

	/**
	 * Creates a sweeper.
	 * @param intervalMicros the least time between two sweeps
	 * @param nowMicros the current time; the first sweep is due one interval later
	 * @param sweep the sweep, given the current time; called with the sweeper's lock held
	 */
	public IdleSweeper(long intervalMicros, long nowMicros, LongConsumer sweep) {
		this.intervalMicros = intervalMicros;
		this.sweep = sweep;
		this.nextMicros = nowMicros + intervalMicros;
	}

	/**
	 * Sweeps if the interval has passed and no other thread is sweeping.
	 * @param nowMicros the current time
	 */
	public void sweepIfDue(long nowMicros) {
		if (nowMicros >= this.nextMicros && this.lock.tryLock()) {
			try {
				if (nowMicros >= this.nextMicros) {
					run(nowMicros);
				}
			}
			finally {
				this.lock.unlock();
			}
		}
	}

	/**
	 * Sweeps now, after any sweep under way.
	 * @param nowMicros the current time
	 */
	public void sweepNow(long nowMicros) {
		this.lock.lock();
		try {
			run(nowMicros);
		}
		finally {
			this.lock.unlock();
		}
	}

	private void run(long nowMicros) {
		this.nextMicros = nowMicros + this.intervalMicros;
		this.sweep.accept(nowMicros);
	}

}
