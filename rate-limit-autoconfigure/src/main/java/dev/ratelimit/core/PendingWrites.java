package dev.ratelimit.core;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * Writes to a shared store that must not be lost and could not be confirmed:
 * those that could not reach the store, and undoes of those that may have
 * reached it without an answer. Kept in this instance and applied once the
 * store answers again. A budget's settles and releases are kept so that the
 * spend of work that ran is charged, not forgotten when the reservation's
 * lease runs out; a reservation or a distributed permit whose call got no
 * answer in time (Redis froze or stalled with the call written to it) is
 * released the same way, so that what Redis applied after its caller gave up
 * holds nothing until its lease ends. A primary that dies or a server that
 * freezes with calls in flight is the usual cause.
 * <p>
 * Each write must change nothing when applied twice, or when what it undoes
 * never happened (the stores keep a done marker per reservation id; releasing
 * a permit not held is harmless), so one whose reply was lost is simply
 * applied again. Attempts run on one daemon thread of their own, never on a
 * request thread: at once when a call finds the store answering again, else
 * after a pause that grows from 100 ms to 5 s. Writes are applied in the
 * order they were kept, after the calls they undo, which went first on the
 * same connection.
 * <p>
 * Bounded: at most {@link #MAX_PENDING} are kept per keeper. A call in flight
 * when the store fails, or one that times out while it is slow, is the only
 * source of one (calls made while it is silent are refused before they are
 * sent, and follow their limit's failure mode). What the owner does when it is
 * full is its own: budgets refuse new reservations on the store rather than
 * forget spend (releases of unanswered reservations have a keeper of their
 * own, which never refuses); a reservation or a permit not released frees
 * when its lease ends.
 *
 * @param <W> what is kept
 */
public final class PendingWrites<W> implements AutoCloseable {

	private static final Logger logger = System.getLogger(PendingWrites.class.getName());

	/** The most writes kept at once. */
	public static final int MAX_PENDING = 100_000;

	private static final long FIRST_PAUSE_MILLIS = 100;

	private static final long LONGEST_PAUSE_MILLIS = 5000;

	private final String what;

	private final String appliedMeans;

	private final Consumer<W> apply;

	private final int maxPending;

	/** Guarded by itself. */
	private final ArrayDeque<W> pending = new ArrayDeque<>();

	/**
	 * Held while writes are applied: never two attempts at once. A lock,
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

	/** Guarded by {@link #pending}: whether a write kept since the last were applied was warned of. */
	private boolean toldOf;

	private long pauseMillis = FIRST_PAUSE_MILLIS;

	/** Whether the last attempt failed; only the attempt thread touches it. */
	private boolean failing;

	/**
	 * Creates a keeper.
	 * @param name what its thread is named after ({@code budget-settlements}:
	 * {@code rate-limit-pending-budget-settlements})
	 * @param what what it keeps, as its log lines count them ({@code budget settlement(s)})
	 * @param appliedMeans what applying them means, for the line that says they were
	 * ({@code their spend is charged})
	 * @param apply applies one write to its store, throwing when it cannot
	 */
	public PendingWrites(String name, String what, String appliedMeans, Consumer<W> apply) {
		this(name, what, appliedMeans, apply, MAX_PENDING);
	}

	/**
	 * Creates a keeper with a bound of its own, for tests of the bound.
	 * @param name what its thread is named after
	 * @param what what it keeps, as its log lines count them
	 * @param appliedMeans what applying them means
	 * @param apply applies one write to its store, throwing when it cannot
	 * @param maxPending the most writes kept at once
	 */
	public PendingWrites(String name, String what, String appliedMeans, Consumer<W> apply, int maxPending) {
		this.what = what;
		this.appliedMeans = appliedMeans;
		this.apply = apply;
		this.maxPending = maxPending;
		String threadName = "rate-limit-pending-" + name;
		ThreadFactory daemon = (task) -> {
			Thread thread = new Thread(task, threadName);
			thread.setDaemon(true);
			return thread;
		};
		this.thread = new ScheduledThreadPoolExecutor(1, daemon);
		// No thread at all while nothing is pending, which is nearly always.
		this.thread.setKeepAliveTime(10, TimeUnit.SECONDS);
		this.thread.allowCoreThreadTimeOut(true);
	}

	/**
	 * Keeps a write and schedules an attempt.
	 * @param write what could not be applied, or undoes what may have been
	 * @return whether it is kept; {@code false} when the bound is reached
	 */
	public boolean keep(W write) {
		return keep(write, false);
	}

	/**
	 * Keeps a write and schedules an attempt.
	 * @param write what could not be applied, or undoes what may have been
	 * @param announced whether its failure was an outage the store told of
	 * already: when every write kept was, applying them is logged at debug
	 * level, the store's own line saying that it answers again
	 * @return whether it is kept; {@code false} when the bound is reached
	 */
	public boolean keep(W write, boolean announced) {
		synchronized (this.pending) {
			if (this.pending.size() >= this.maxPending) {
				return false;
			}
			this.pending.addLast(write);
			this.size = this.pending.size();
			this.toldOf |= !announced;
		}
		schedule(FIRST_PAUSE_MILLIS);
		return true;
	}

	/**
	 * Tells that a call found the store answering: pending writes are
	 * applied now, on the keeper's thread. Cheap when none is pending, as on
	 * nearly every call.
	 */
	public void storeAnswered() {
		if (this.size != 0) {
			schedule(0);
		}
	}

	/**
	 * Returns whether the keeper holds its bound of writes.
	 * @return whether it is full
	 */
	public boolean isFull() {
		return this.size >= this.maxPending;
	}

	/**
	 * Returns how many writes wait to be applied.
	 * @return the count
	 */
	public int size() {
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
	 * Applies the pending writes in order, until one fails; one caller at a
	 * time (the keeper's thread, and {@link #close()} after it).
	 * @return whether none is left
	 */
	public boolean applyPending() {
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
			W next;
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
					logger.log(Level.DEBUG, "Pending " + this.what + " still cannot be applied (" + this.size
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
			logger.log(warned ? Level.INFO : Level.DEBUG, "Applied " + applied + " " + this.what
					+ " kept while the store could not be reached; " + this.appliedMeans);
		}
		return true;
	}

	/**
	 * Makes one last attempt and stops the keeper's thread.
	 * @return what still could not be applied, in the order kept: for the owner
	 * to say what is lost; empty when nothing is
	 */
	public List<W> closed() {
		this.thread.shutdownNow();
		if (this.size == 0 || applyPending()) {
			return List.of();
		}
		synchronized (this.pending) {
			return new ArrayList<>(this.pending);
		}
	}

	/** Makes one last attempt and stops the keeper's thread, what is left unsaid: see {@link #closed()}. */
	@Override
	public void close() {
		closed();
	}

}
