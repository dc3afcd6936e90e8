package dev.ratelimit.concurrency;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.LongSupplier;

import com.netflix.concurrency.limits.limiter.AbstractLimiter;

/**
 * One adaptive cap's limiter: Netflix's {@link AbstractLimiter} (the limit
 * algorithm, the calls in flight, the latency samples) with admission by
 * {@link Priority}, as {@link Shedding} describes it. Admission takes a short
 * monitor so that the check and the count are one step; a release counts down
 * without it (a decision racing a release may shed a call it could have
 * admitted, never the reverse).
 */
final class PriorityLimiter extends AbstractLimiter<Priority> {

	private static final Priority[] PRIORITIES = Priority.values();

	private final Shedding shedding;

	private final int minLimit;

	/**
	 * Held for a few reads and two increments: a monitor, as Netflix's own limits
	 * use, rather than a lock that parks a contended thread (an event loop's).
	 */
	private final Object lock = new Object();

	/** Calls in flight per class, by ordinal. */
	private final AtomicIntegerArray busy = new AtomicIntegerArray(PRIORITIES.length);

	PriorityLimiter(String name, AdaptiveLimit limit, Shedding shedding, LongSupplier nanoClock) {
		super(new Builder().named(name).limit(limit.newLimit()).nanoClock(nanoClock));
		this.shedding = shedding;
		this.minLimit = limit.minLimit();
	}

	/**
	 * Admits a call of a class, or sheds it.
	 * @param priority the call's class
	 * @return the listener to tell how the call ended, empty when the call is shed
	 */
	@Override
	public Optional<Listener> acquire(Priority priority) {
		synchronized (this.lock) {
			if (!admits(priority)) {
				return createRejectedListener();
			}
			this.busy.incrementAndGet(priority.ordinal());
			return Optional.of(counted(priority, createListener()));
		}
	}

	/**
	 * Admits a call whatever the limit says, for a shadow cap: it runs, so it is
	 * measured and counted like any other.
	 * @param priority the call's class
	 * @return the listener to tell how the call ended
	 */
	Listener admit(Priority priority) {
		synchronized (this.lock) {
			this.busy.incrementAndGet(priority.ordinal());
			return counted(priority, createListener());
		}
	}

	/**
	 * The rule of {@link Shedding}: a class below its guaranteed share is
	 * admitted; beyond it, a call is admitted while the calls in flight and the
	 * unused shares of the classes above it leave room under the limit.
	 */
	private boolean admits(Priority priority) {
		int limit = limit();
		int own = this.busy.get(priority.ordinal());
		if (own < guaranteed(priority, limit)) {
			return true;
		}
		long reserved = 0;
		for (int higher = 0; higher < priority.ordinal(); higher++) {
			reserved += Math.max(0, guaranteed(PRIORITIES[higher], limit) - this.busy.get(higher));
		}
		return getInflight() + reserved < limit;
	}

	private int guaranteed(Priority priority, int limit) {
		return (int) (limit * this.shedding.share(priority));
	}

	/** @return the limit now, never below min-limit (Vegas has no floor of its own) */
	int limit() {
		return Math.max(this.minLimit, getLimit());
	}

	/**
	 * Returns the calls of a class in flight.
	 * @param priority the class
	 * @return the number of calls
	 */
	int inFlight(Priority priority) {
		return this.busy.get(priority.ordinal());
	}

	private Listener counted(Priority priority, Listener listener) {
		int index = priority.ordinal();
		return new Listener() {

			@Override
			public void onSuccess() {
				PriorityLimiter.this.busy.decrementAndGet(index);
				listener.onSuccess();
			}

			@Override
			public void onIgnore() {
				PriorityLimiter.this.busy.decrementAndGet(index);
				listener.onIgnore();
			}

			@Override
			public void onDropped() {
				PriorityLimiter.this.busy.decrementAndGet(index);
				listener.onDropped();
			}

		};
	}

	/** Netflix's builder, with nothing of its own. */
	private static final class Builder extends AbstractLimiter.Builder<Builder> {

		@Override
		protected Builder self() {
			return this;
		}

	}

}
