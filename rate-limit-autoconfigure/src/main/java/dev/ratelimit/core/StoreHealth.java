package dev.ratelimit.core;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

/**
 * Whether the store of one kind of limit answers, as its calls find it, part
 * by part (see {@link StoreParts}), and what happens when that changes: one
 * warning when a part stops answering, one line when it answers again (or no
 * longer keeps keys: its keys moved to a part that answers), never one per
 * call, and the listeners told. Calls on the other parts of the store go on
 * answering meanwhile without clearing the failing one. The same for the
 * rate-limit backend, the budget store and the permit store.
 */
public final class StoreHealth {

	private static final Logger logger = System.getLogger(StoreHealth.class.getName());

	/** How often, at most, a part that failed is asked whether it still keeps keys. */
	private static final long MOVED_CHECK_NANOS = 100_000_000L;

	private final LimitKind kind;

	private final String store;

	private final LimitListener listener;

	private final StoreParts parts;

	private final Set<String> failing = ConcurrentHashMap.newKeySet();

	/** Whether any part fails: the one read of an answered call while none does. */
	private volatile boolean anyFailing;

	private volatile long movedCheckedNanos;

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
		if (this.failing.contains(part)) {
			return;
		}
		synchronized (this) {
			if (!this.failing.add(part)) {
				return;
			}
			boolean first = !this.anyFailing;
			this.anyFailing = true;
			// A failover the store announced with a warning of its own is not warned of again, per kind.
			logger.log(AnnouncedOutage.in(cause) ? Level.INFO : Level.WARNING, this.store + " failed" + on(part)
					+ "; applying each " + this.kind.label()
					+ "'s failure mode" + (part.isEmpty() ? "" : " to the keys there") + " until it answers again: "
					+ Causes.describe(cause));
			this.listener.storePartAvailabilityChanged(this.kind, part, false, cause);
			if (first) {
				this.listener.storeAvailabilityChanged(this.kind, false, cause);
			}
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
		return Set.copyOf(this.failing);
	}

	private void recovered(String part, @Nullable String why) {
		if (!this.failing.contains(part)) {
			return;
		}
		synchronized (this) {
			if (!this.failing.remove(part)) {
				return;
			}
			logger.log(Level.INFO, this.store + ((why != null) ? why : " answers again" + on(part))
					+ "; decisions are back on it");
			this.listener.storePartAvailabilityChanged(this.kind, part, true, null);
			if (this.failing.isEmpty()) {
				this.anyFailing = false;
				this.listener.storeAvailabilityChanged(this.kind, true, null);
			}
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
		for (String part : this.failing) {
			if (!part.isEmpty() && !this.parts.keepsKeys(part)) {
				recovered(part, ": " + part + " keeps no keys any more, they moved to a part that answers");
			}
		}
	}

	private static String on(String part) {
		return part.isEmpty() ? "" : " on " + part;
	}

}
