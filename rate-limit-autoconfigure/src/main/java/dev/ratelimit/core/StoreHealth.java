package dev.ratelimit.core;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Whether the store of one kind of limit answers, as its calls find it, and
 * what happens when that changes: one warning when it stops answering, one
 * line when it answers again, never one per call, and the listeners told. The
 * same for the rate-limit backend, the budget store and the permit store.
 */
public final class StoreHealth {

	private static final Logger logger = System.getLogger(StoreHealth.class.getName());

	private final LimitKind kind;

	private final String store;

	private final LimitListener listener;

	private final AtomicBoolean failing = new AtomicBoolean();

	/**
	 * Creates the health of a store.
	 * @param kind the kind of limit the store serves
	 * @param store the store as log lines name it, such as {@code Rate limit backend}
	 * @param listener hears the changes
	 */
	public StoreHealth(LimitKind kind, String store, LimitListener listener) {
		this.kind = kind;
		this.store = store;
		this.listener = listener;
	}

	/**
	 * Records that the store answered a call.
	 */
	public void answered() {
		if (this.failing.get() && this.failing.compareAndSet(true, false)) {
			logger.log(Level.INFO, this.store + " answers again; decisions are back on it");
			this.listener.storeAvailabilityChanged(this.kind, true, null);
		}
	}

	/**
	 * Records that the store failed a call.
	 * @param cause the failure
	 */
	public void failed(RuntimeException cause) {
		if (this.failing.compareAndSet(false, true)) {
			logger.log(Level.WARNING, this.store + " failed; applying each " + this.kind.label()
					+ "'s failure mode until it answers again: " + cause);
			this.listener.storeAvailabilityChanged(this.kind, false, cause);
		}
	}

	/** @return whether the last call found the store answering */
	public boolean available() {
		return !this.failing.get();
	}

}
