package dev.ratelimit.concurrency;

import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
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
 * <p>
 * A class is not shed for a burst while its calls, with those of the classes
 * above it, fit under the limit on average: their arrival rate (remembered
 * over about a second) times their latency (averaged over a few hundred
 * calls), Little's law. Such a class may run past the limit, up to three times
 * it, so a burst of critical calls (or the pile-up behind a pause) queues
 * briefly instead of being refused while critical demand alone is under
 * capacity; once it does not fit (a surge, not a burst), the class is held to
 * the limit again and the latency with it. A class whose calls have not ended
 * yet has no latency, so no such allowance. A call let past the limit is no
 * sample for the limit algorithm: the queue it waited in was allowed on
 * purpose, and heard it would lift the latency baseline and the limit with it.
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

	/** How long arrival rates are remembered: they decay by e in this long. */
	static final long RATE_MEMORY_NANOS = 1_000_000_000L;

	/** Each class's arrival rate, in calls per nanosecond, as of {@link #arrivalsAt}; under the monitor. */
	private final double[] arrivals = new double[PRIORITIES.length];

	private final long[] arrivalsAt = new long[PRIORITIES.length];

	/**
	 * Each class's latency, an average over its last few hundred calls, in nanoseconds, 0
	 * until one has ended: written as calls end, outside the monitor (an update
	 * lost to a race is one sample fewer).
	 */
	private final AtomicLongArray latency = new AtomicLongArray(PRIORITIES.length);

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
		Arrays.fill(this.arrivalsAt, now);
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
			arrived(priority.ordinal(), now);
			if (!admits(priority, now)) {
				return createRejectedListener();
			}
			// A call let past the limit waits in a queue the cap allowed on purpose: its latency is not the
			// service's, and heard as such it would lift the latency baseline and with it the limit.
			boolean pastLimit = getInflight() >= limit();
			this.busy.incrementAndGet(priority.ordinal());
			return Optional.of(counted(priority, now, pastLimit, createListener()));
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
			long now = this.nanoClock.getAsLong();
			arrived(priority.ordinal(), now);
			this.busy.incrementAndGet(priority.ordinal());
			return counted(priority, now, false, createListener());
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
	 * beyond twice the limit nor max-limit. A class that fits under the limit on
	 * average, with the classes above it, is held to three times the limit
	 * (nor beyond max-limit) instead, so that a burst of it is not shed.
	 */
	private boolean admits(Priority priority, long now) {
		int limit = limit();
		int own = this.busy.get(priority.ordinal());
		if (own < guaranteed(priority, limit)) {
			return true;
		}
		int inFlight = getInflight();
		boolean burst = fitsOnAverage(priority, limit, now);
		long ceiling = Math.min((burst ? 3L : 2L) * limit, this.maxLimit);
		if (inFlight >= ceiling) {
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
		long bound = burst ? ceiling : limit;
		return atOrAbove + reserved < bound;
	}

	/**
	 * Whether a class's calls and those above it, at their recent arrival rates
	 * and latencies, would keep fewer calls in flight than the limit. False while
	 * any of them has no latency yet: an allowance is not given on no evidence.
	 */
	private boolean fitsOnAverage(Priority priority, int limit, long now) {
		double offered = 0;
		for (int index = 0; index <= priority.ordinal(); index++) {
			long latency = this.latency.get(index);
			if (latency == 0 && this.arrivals[index] > 0) {
				return false;
			}
			offered += decayed(this.arrivals[index], this.arrivalsAt[index], now, RATE_MEMORY_NANOS) * latency;
		}
		return offered < limit;
	}

	/** Counts an arrival of a class into its decaying rate (each adds 1/memory). */
	private void arrived(int index, long now) {
		this.arrivals[index] = decayed(this.arrivals[index], this.arrivalsAt[index], now, RATE_MEMORY_NANOS)
				+ 1.0 / RATE_MEMORY_NANOS;
		this.arrivalsAt[index] = now;
	}

	/** Folds an ended call's latency into its class's average (weight 1/256, about its last 256 calls). */
	private void ended(int index, long startedAt) {
		long sample = Math.max(1, this.nanoClock.getAsLong() - startedAt);
		long average = this.latency.get(index);
		this.latency.set(index, (average == 0) ? sample : average + (sample - average) / 256);
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
		return decayed(this.demand[index], this.demandAt[index], now, DEMAND_MEMORY_NANOS);
	}

	/** A value as of a time, decayed exponentially to now. */
	private static double decayed(double value, long at, long now, long memoryNanos) {
		long elapsed = now - at;
		return (elapsed <= 0) ? value : value * Math.exp(-(double) elapsed / memoryNanos);
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

	/**
	 * Wraps Netflix's listener to count the class's calls and latency; a
	 * success of a call admitted past the limit is no sample for the limit
	 * (a drop still is).
	 */
	private Listener counted(Priority priority, long startedAt, boolean pastLimit, Listener listener) {
		int index = priority.ordinal();
		return new Listener() {

			@Override
			public void onSuccess() {
				PriorityLimiter.this.busy.decrementAndGet(index);
				ended(index, startedAt);
				if (pastLimit) {
					listener.onIgnore();
				}
				else {
					listener.onSuccess();
				}
			}

			@Override
			public void onIgnore() {
				PriorityLimiter.this.busy.decrementAndGet(index);
				listener.onIgnore();
			}

			@Override
			public void onDropped() {
				PriorityLimiter.this.busy.decrementAndGet(index);
				ended(index, startedAt);
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
