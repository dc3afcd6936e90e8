package dev.ratelimit.budget;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayDeque;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * Settlements (settles and releases) of reservations whose store could not be
 * reached when the work finished, kept in this instance and applied once the
 * store answers again: the spend of work that ran is charged, not forgotten
 * when the reservation's lease runs out and returns the estimate. A primary
 * that dies between a reservation and its settle is the usual cause.
 * <p>
 * Applying a settlement twice changes nothing (the store keeps a done marker
 * per reservation id for the reservation timeout), so one whose reply was
 * lost is simply applied again. Attempts run on one daemon thread of their
 * own, never on a request thread: at once when a call finds the store
 * answering again, else after a pause that grows from 100 ms to 5 s.
 * Settlements are applied in the order they were kept.
 * <p>
 * Bounded: at most {@link #MAX_PENDING} are kept. A reservation in flight when
 * the store fails is the only source of one (reservations made while it fails
 * follow the budget's failure mode and are not held in the store), so the
 * bound is the work in flight at an outage; {@link CostBudgets} refuses new
 * reservations on the store while it is full rather than forget spend.
 */
final class PendingSettlements implements AutoCloseable {

	private static final Logger logger = System.getLogger(PendingSettlements.class.getName());

	/** The most settlements kept at once. */
	static final int MAX_PENDING = 100_000;

	private static final long FIRST_PAUSE_MILLIS = 100;

	private static final long LONGEST_PAUSE_MILLIS = 5000;

	private final Consumer<Settlement> apply;

	private final int maxPending;

	/** Guarded by itself. */
	private final ArrayDeque<Settlement> pending = new ArrayDeque<>();

	/**
	 * Held while settlements are applied: never two attempts at once. A lock,
	 * not a monitor: it is held across the store's calls (Redis round trips),
	 * and a virtual thread that parks inside a monitor pins its carrier on JDK
	 * 21 to 23 (the keeper's own thread is a platform one, but {@link #close()}
	 * runs on whichever thread closes the application).
	 */
	private final ReentrantLock applying = new ReentrantLock();

	/** Whether an attempt is scheduled or running: at most one at a time. */
	private final AtomicBoolean attemptDue = new AtomicBoolean();

	private final ScheduledThreadPoolExecutor thread;

	private volatile int size;

	/** Guarded by {@link #pending}: whether a settlement kept since the last were applied was warned of. */
	private boolean toldOf;

	private long pauseMillis = FIRST_PAUSE_MILLIS;

	/** Whether the last attempt failed; only the attempt thread touches it. */
	private boolean failing;

	/**
	 * Creates the keeper.
	 * @param apply applies one settlement to its store, throwing when it cannot
	 */
	PendingSettlements(Consumer<Settlement> apply) {
		this(apply, MAX_PENDING);
	}

	/**
	 * Creates the keeper with a bound of its own, for tests of the bound.
	 * @param apply applies one settlement to its store, throwing when it cannot
	 * @param maxPending the most settlements kept at once
	 */
	PendingSettlements(Consumer<Settlement> apply, int maxPending) {
		this.apply = apply;
		this.maxPending = maxPending;
		ThreadFactory daemon = (task) -> {
			Thread thread = new Thread(task, "rate-limit-pending-settlements");
			thread.setDaemon(true);
			return thread;
		};
		this.thread = new ScheduledThreadPoolExecutor(1, daemon);
		// No thread at all while nothing is pending, which is nearly always.
		this.thread.setKeepAliveTime(10, TimeUnit.SECONDS);
		this.thread.allowCoreThreadTimeOut(true);
	}

	/**
	 * Keeps a settlement and schedules an attempt.
	 * @param settlement what could not be applied
	 * @return whether it is kept; {@code false} when {@link #MAX_PENDING} are
	 * kept already
	 */
	boolean keep(Settlement settlement) {
		return keep(settlement, false);
	}

	/**
	 * Keeps a settlement and schedules an attempt.
	 * @param settlement what could not be applied
	 * @param announced whether its failure was an outage the store told of
	 * already: when every settlement kept was, applying them is logged at debug
	 * level, the store's own line saying that it answers again
	 * @return whether it is kept; {@code false} when {@link #MAX_PENDING} are
	 * kept already
	 */
	boolean keep(Settlement settlement, boolean announced) {
		synchronized (this.pending) {
			if (this.pending.size() >= this.maxPending) {
				return false;
			}
			this.pending.addLast(settlement);
			this.size = this.pending.size();
			this.toldOf |= !announced;
		}
		schedule(FIRST_PAUSE_MILLIS);
		return true;
	}

	/**
	 * Tells that a call found the store answering: pending settlements are
	 * applied now, on the keeper's thread. Cheap when none is pending, as on
	 * nearly every call.
	 */
	void storeAnswered() {
		if (this.size != 0) {
			schedule(0);
		}
	}

	/**
	 * Returns whether the keeper holds its bound of settlements.
	 * @return whether it is full
	 */
	boolean isFull() {
		return this.size >= this.maxPending;
	}

	/**
	 * Returns how many settlements wait to be applied.
	 * @return the count
	 */
	int size() {
		return this.size;
	}

	private void schedule(long delayMillis) {
		if (this.attemptDue.compareAndSet(false, true)) {
			try {
				this.thread.schedule(this::attempt, delayMillis, TimeUnit.MILLISECONDS);
			}
			catch (RejectedExecutionException ex) {
				// Closed: the application is stopping, and close() made the last attempt.
				this.attemptDue.set(false);
			}
		}
	}

	private void attempt() {
		boolean done = applyPending();
		this.attemptDue.set(false);
		if (done) {
			if (this.size != 0) {
				// Kept after this attempt looked for the last time.
				schedule(0);
			}
			return;
		}
		long pause = this.pauseMillis;
		this.pauseMillis = Math.min(LONGEST_PAUSE_MILLIS, pause * 2);
		schedule(pause);
	}

	/**
	 * Applies the pending settlements in order, until one fails; one caller at a
	 * time (the keeper's thread, and {@link #close()} after it).
	 * @return whether none is left
	 */
	boolean applyPending() {
		this.applying.lock();
		try {
			return applyInOrder();
		}
		finally {
			this.applying.unlock();
		}
	}

	private boolean applyInOrder() {
		int applied = 0;
		while (true) {
			Settlement next;
			synchronized (this.pending) {
				next = this.pending.peekFirst();
			}
			if (next == null) {
				break;
			}
			try {
				this.apply.accept(next);
			}
			catch (RuntimeException ex) {
				if (!this.failing) {
					this.failing = true;
					logger.log(Level.DEBUG, "Pending budget settlements still cannot be applied (" + this.size
							+ " kept): " + ex);
				}
				return false;
			}
			synchronized (this.pending) {
				this.pending.pollFirst();
				this.size = this.pending.size();
			}
			applied++;
		}
		this.failing = false;
		this.pauseMillis = FIRST_PAUSE_MILLIS;
		boolean warned;
		synchronized (this.pending) {
			warned = this.toldOf;
			this.toldOf = false;
		}
		if (applied > 0) {
			logger.log(warned ? Level.INFO : Level.DEBUG, "Applied " + applied
					+ " budget settlement(s) kept while the budget store could not be reached; their spend is charged");
		}
		return true;
	}

	/**
	 * Makes one last attempt and stops the keeper's thread; what still cannot be
	 * applied is logged at error level, with its amount: that spend is lost.
	 */
	@Override
	public void close() {
		this.thread.shutdownNow();
		if (this.size == 0 || applyPending()) {
			return;
		}
		long micros = 0;
		int count;
		synchronized (this.pending) {
			count = this.pending.size();
			for (Settlement settlement : this.pending) {
				micros += settlement.actualMicros();
			}
		}
		logger.log(Level.ERROR, count + " budget settlement(s) could not be applied before shutdown; their spend ("
				+ Amounts.format(micros) + " in all) is not charged and their estimates return when their "
				+ "reservations time out");
	}

	/**
	 * A settle or a release that could not reach its store.
	 * @param store the store that holds the reservation
	 * @param policy the budget
	 * @param key the storage key
	 * @param id the reservation's id
	 * @param actualMicros the actual cost to charge, 0 for a release
	 * @param release whether the estimate is returned rather than settled
	 */
	record Settlement(BudgetStore store, BudgetPolicy policy, String key, String id, long actualMicros,
			boolean release) {

		/**
		 * Applies it to its store.
		 * @return the budget's state after it
		 */
		BudgetDecision apply() {
			return this.release ? this.store.release(this.policy, this.key, this.id)
					: this.store.settle(this.policy, this.key, this.id, this.actualMicros);
		}

	}

}
