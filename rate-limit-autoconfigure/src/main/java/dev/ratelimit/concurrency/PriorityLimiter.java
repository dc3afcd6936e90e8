package dev.ratelimit.concurrency;

import java.util.Arrays;
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
 * <p>
 * What a class keeps from the classes below it is the larger of its
 * guaranteed share and its recent demand: the most calls of it in flight at
 * once, this one counted, remembered with a decay of
 * {@link #DEMAND_MEMORY_NANOS}. A running call cannot be preempted, so a lower
 * class may only take the room a higher one has not been asking for lately;
 * a higher class whose demand grows (its calls shed, or in flight beyond its
 * share) pushes the classes below it back to their own shares within about
 * one latency, and they get the room back a few seconds after the demand
 * falls.
 */
final class PriorityLimiter extends AbstractLimiter<Priority> {

	private static final Priority[] PRIORITIES = Priority.values();

	/** Each class's guaranteed share, by ordinal: read at every admission, so not looked up in a map. */
	private final double[] shares = new double[PRIORITIES.length];

	private final int minLimit;

	private final int maxLimit;

	/**
	 * Held for a few reads and two increments: a monitor, as Netflix's own limits
	 * use, rather than a lock that parks a contended thread (an event loop's).
	 */
	private final Object lock = new Object();

	/** How long a class's demand is remembered: it decays by e (to 37%) in this long. */
	static final long DEMAND_MEMORY_NANOS = 2_000_000_000L;

	/** Calls in flight per class, by ordinal. */
	private final AtomicIntegerArray busy = new AtomicIntegerArray(PRIORITIES.length);

	/** Each class's recent demand, by ordinal, as of {@link #demandAt}; under the monitor. */
	private final double[] demand = new double[PRIORITIES.length];

	private final long[] demandAt = new long[PRIORITIES.length];

	private final LongSupplier nanoClock;

	PriorityLimiter(String name, AdaptiveLimit limit, Shedding shedding, LongSupplier nanoClock) {
		super(new Builder().named(name).limit(limit.newLimit()).nanoClock(nanoClock));
		for (Priority priority : PRIORITIES) {
			this.shares[priority.ordinal()] = shedding.share(priority);
		}
		this.minLimit = limit.minLimit();
		this.maxLimit = limit.maxLimit();
		this.nanoClock = nanoClock;
		long now = nanoClock.getAsLong();
		Arrays.fill(this.demandAt, now);
	}

	/**
	 * Admits a call of a class, or sheds it.
	 * @param priority the call's class
	 * @return the listener to tell how the call ended, empty when the call is shed
	 */
	@Override
	public Optional<Listener> acquire(Priority priority) {
		synchronized (this.lock) {
			long now = this.nanoClock.getAsLong();
			// Asked for, admitted or not: a shed call of a class is demand the classes below must leave room for.
			remember(priority, this.busy.get(priority.ordinal()) + 1, now);
			if (!admits(priority, now)) {
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
	 * admitted; beyond it, a call is admitted while the calls in flight of its
	 * class and the classes above it, and what those above keep (their share or
	 * their recent demand, whichever is larger, less their calls in flight),
	 * leave room under the limit. Calls of lower classes already running do not
	 * stand in a higher class's way: a running call cannot be preempted, so they
	 * are let finish with no successors (their classes now see the higher demand)
	 * while the calls in flight pass the limit for about one latency, never
	 * beyond twice the limit nor max-limit.
	 */
	private boolean admits(Priority priority, long now) {
		int limit = limit();
		int own = this.busy.get(priority.ordinal());
		if (own < guaranteed(priority, limit)) {
			return true;
		}
		int inFlight = getInflight();
		if (inFlight >= Math.min(2L * limit, this.maxLimit)) {
			return false;
		}
		long atOrAbove = own;
		long reserved = 0;
		for (int higher = 0; higher < priority.ordinal(); higher++) {
			int busy = this.busy.get(higher);
			long kept = Math.max(guaranteed(PRIORITIES[higher], limit), (long) demand(higher, now));
			atOrAbove += busy;
			reserved += Math.max(0, kept - busy);
		}
		return atOrAbove + reserved < limit;
	}

	/** Raises a class's remembered demand to what it asks for now, if that is more. */
	private void remember(Priority priority, int asked, long now) {
		int index = priority.ordinal();
		double decayed = demand(index, now);
		this.demand[index] = Math.max(decayed, asked);
		this.demandAt[index] = now;
	}

	/** A class's remembered demand, decayed to now. */
	private double demand(int index, long now) {
		long elapsed = now - this.demandAt[index];
		return (elapsed <= 0) ? this.demand[index]
				: this.demand[index] * Math.exp(-(double) elapsed / DEMAND_MEMORY_NANOS);
	}

	private int guaranteed(Priority priority, int limit) {
		return (int) (limit * this.shares[priority.ordinal()]);
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
