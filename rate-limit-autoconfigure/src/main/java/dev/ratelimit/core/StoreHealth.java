package dev.ratelimit.core;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

/**
 * Whether the store of one kind of limit answers, as its calls find it, part
 * by part (see {@link StoreParts}), and what happens when that changes: one
 * warning when a part stops answering, one line when it answers again (or no
 * longer keeps keys: its keys moved to a part that answers), never one per
 * call, and the listeners told. Calls on the other parts of the store go on
 * answering meanwhile without clearing the failing one. The same for the
 * rate-limit backend, the budget store and the permit store.
 * <p>
 * A failure that is an outage the store told of already ({@link AnnouncedOutage}:
 * a Redis that sends nothing, a lost connection, a failover) is logged at
 * debug level, and so is the part's answering again: the store's own warning
 * and its line when decisions are back say it once for every kind of limit.
 */
public final class StoreHealth {

	private static final Logger logger = System.getLogger(StoreHealth.class.getName());

	/** How often, at most, a part that failed is asked whether it still keeps keys. */
	private static final long MOVED_CHECK_NANOS = 100_000_000L;

	private final LimitKind kind;

	private final String store;

	private final LimitListener listener;

	private final StoreParts parts;

	/** The failing parts, each with whether its failure was an outage told of already. */
	private final Map<String, Boolean> failing = new ConcurrentHashMap<>();

	/** Whether any part fails: the one read of an answered call while none does. */
	private volatile boolean anyFailing;

	private volatile long movedCheckedNanos;

	/**
	 * Orders the changes of availability, their log lines and what the listener
	 * hears. A lock, not a monitor: a decision's thread takes it (virtual, with
	 * {@code spring.threads.virtual.enabled}), and logging and the listeners may
	 * park under it; a virtual thread that parks inside a monitor pins its
	 * carrier on JDK 21 to 23.
	 */
	private final ReentrantLock lock = new ReentrantLock();

	/**
	 * Creates the health of a store of one part.
	 * @param kind the kind of limit the store serves
	 * @param store the store as log lines name it, such as {@code Rate limit backend}
	 * @param listener hears the changes
	 */
	public StoreHealth(LimitKind kind, String store, LimitListener listener) {
		this(kind, store, listener, StoreParts.ONE);
	}

	/**
	 * Creates the health of a store.
	 * @param kind the kind of limit the store serves
	 * @param store the store as log lines name it, such as {@code Rate limit backend}
	 * @param listener hears the changes
	 * @param parts where the store keeps each key
	 */
	public StoreHealth(LimitKind kind, String store, LimitListener listener, StoreParts parts) {
		this.kind = kind;
		this.store = store;
		this.listener = listener;
		this.parts = parts;
	}

	/**
	 * Records that the store answered a call on a key.
	 * @param key the call's (first) storage key, or {@code null} when it had none
	 */
	public void answered(@Nullable String key) {
		if (!this.anyFailing) {
			return;
		}
		// A call on any part says the store as a whole answers; a part's own call says that part does.
		recovered("", null);
		if (key != null) {
			recovered(this.parts.partOf(key), null);
		}
		forgetMovedParts();
	}

	/**
	 * Records that the store failed a call on a key.
	 * @param key the call's (first) storage key, or {@code null} when it had none
	 * @param cause the failure
	 */
	public void failed(@Nullable String key, RuntimeException cause) {
		String part = (key != null) ? this.parts.partOf(key) : "";
		if (this.failing.containsKey(part)) {
			return;
		}
		this.lock.lock();
		try {
			boolean announced = AnnouncedOutage.in(cause);
			if (this.failing.putIfAbsent(part, announced) != null) {
				return;
			}
			boolean first = !this.anyFailing;
			this.anyFailing = true;
			// An outage the store announced with a warning of its own is not told of again, per kind.
			logger.log(announced ? Level.DEBUG : Level.WARNING, this.store + " failed" + on(part)
					+ "; applying each " + this.kind.label()
					+ "'s failure mode" + (part.isEmpty() ? "" : " to the keys there") + " until it answers again: "
					+ Causes.describe(cause));
			this.listener.storePartAvailabilityChanged(this.kind, part, false, cause);
			if (first) {
				this.listener.storeAvailabilityChanged(this.kind, false, cause);
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Records that the store answered a call.
	 */
	public void answered() {
		answered(null);
	}

	/**
	 * Records that the store failed a call.
	 * @param cause the failure
	 */
	public void failed(RuntimeException cause) {
		failed(null, cause);
	}

	/** @return whether no part of the store is failing, as the last calls found them */
	public boolean available() {
		return !this.anyFailing;
	}

	/**
	 * Returns the parts failing now.
	 * @return their names, {@code ""} for the store as a whole
	 */
	public Set<String> failingParts() {
		return Set.copyOf(this.failing.keySet());
	}

	private void recovered(String part, @Nullable String why) {
		if (!this.failing.containsKey(part)) {
			return;
		}
		this.lock.lock();
		try {
			Boolean announced = this.failing.remove(part);
			if (announced == null) {
				return;
			}
			// The end of an announced outage is told once, where it was announced.
			logger.log(announced ? Level.DEBUG : Level.INFO,
					this.store + ((why != null) ? why : " answers again" + on(part)) + "; decisions are back on it");
			this.listener.storePartAvailabilityChanged(this.kind, part, true, null);
			if (this.failing.isEmpty()) {
				this.anyFailing = false;
				this.listener.storeAvailabilityChanged(this.kind, true, null);
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Clears the failing parts that keep no key any more (their keys moved to a
	 * part that answers, after a failover), asking at most every 100 ms.
	 */
	private void forgetMovedParts() {
		long now = System.nanoTime();
		if (now - this.movedCheckedNanos < MOVED_CHECK_NANOS) {
			return;
		}
		this.movedCheckedNanos = now;
		for (String part : this.failing.keySet()) {
			if (!part.isEmpty() && !this.parts.keepsKeys(part)) {
				recovered(part, ": " + part + " keeps no keys any more, they moved to a part that answers");
			}
		}
	}

	private static String on(String part) {
		return part.isEmpty() ? "" : " on " + part;
	}

}
