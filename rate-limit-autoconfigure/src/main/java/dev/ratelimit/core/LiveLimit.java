package dev.ratelimit.core;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

/**
 * One configured limit as it stands now: its definition from the configuration
 * with the run-time overrides laid over it. Every place that applies the limit
 * (an annotated method, a route, the programmatic API) reads {@link #current()}
 * per call, so that a refreshed configuration or an override takes effect for
 * the next decision, without a restart.
 * <p>
 * Changes are serialised; reads are one volatile read. A change that the
 * limit's kind refuses throws and changes nothing: the limit keeps deciding
 * with what it had.
 *
 * @param <L> the kind of limit
 */
public final class LiveLimit<L extends Limit> {

	/**
	 * Serialises the changes. A lock, not a monitor: {@link #change} keeps the
	 * change in a store (a Redis round trip for shared overrides) while holding
	 * it, on an endpoint's request thread, virtual with
	 * {@code spring.threads.virtual.enabled}; a virtual thread that parks inside
	 * a monitor pins its carrier on JDK 21 to 23.
	 */
	private final ReentrantLock lock = new ReentrantLock();

	/** Guarded by the lock. */
	private LimitDefinition<L> configured;

	/** Guarded by the lock. */

	private Map<String, Quota> overrides = Map.of();

	private volatile LimitDefinition<L> current;

	/**
	 * Creates a live limit.
	 * @param configured the definition from the configuration
	 */
	public LiveLimit(LimitDefinition<L> configured) {
		this.configured = Objects.requireNonNull(configured, "configured");
		this.current = configured;
	}

	/** @return the limit's name */
	public String name() {
		return this.current.limit().name();
	}

	/** @return the definition in force: the configuration's with the overrides laid over it */
	public LimitDefinition<L> current() {
		return this.current;
	}

	/** @return the definition from the configuration, without overrides */
	public LimitDefinition<L> configured() {
		this.lock.lock();
		try {
			return this.configured;
		}
		finally {
			this.lock.unlock();
		}
	}

	/** @return the run-time overrides by target ({@code ""} for the limit itself, else a plan) */
	public Map<String, Quota> overrides() {
		this.lock.lock();
		try {
			return this.overrides;
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Replaces the definition from the configuration, keeping the overrides that
	 * still fit it (an override of a plan that is gone, or one the new definition
	 * refuses, is dropped).
	 * @param definition the new definition, of the same name
	 * @return the overrides dropped, by target
	 */
	public Map<String, Quota> reconfigure(LimitDefinition<L> definition) {
		this.lock.lock();
		try {
			if (!definition.limit().name().equals(name())) {
				throw new IllegalArgumentException("Cannot replace limit '" + name() + "' with '"
						+ definition.limit().name() + "'");
			}
			Map<String, Quota> kept = new LinkedHashMap<>();
			Map<String, Quota> dropped = new LinkedHashMap<>();
			for (Map.Entry<String, Quota> override : this.overrides.entrySet()) {
				try {
					definition.overriddenBy(Map.of(override.getKey(), override.getValue()));
					kept.put(override.getKey(), override.getValue());
				}
				catch (PolicyValidationException ex) {
					dropped.put(override.getKey(), override.getValue());
				}
			}
			this.current = definition.overriddenBy(kept);
			this.configured = definition;
			this.overrides = Collections.unmodifiableMap(kept);
			return dropped;
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Replaces every run-time override at once (from a shared store, say).
	 * @param overrides the overrides by target
	 * @throws PolicyValidationException if one does not fit; nothing changes then
	 */
	public void override(Map<String, Quota> overrides) {
		this.lock.lock();
		try {
			Map<String, Quota> copy = Collections.unmodifiableMap(new LinkedHashMap<>(overrides));
			this.current = this.configured.overriddenBy(copy);
			this.overrides = copy;
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Sets or replaces one run-time override.
	 * @param target {@code ""} for the limit itself, else a plan's name
	 * @param quota the numbers
	 * @throws PolicyValidationException if it does not fit; nothing changes then
	 */
	public void override(String target, Quota quota) {
		this.lock.lock();
		try {
			Map<String, Quota> next = new LinkedHashMap<>(this.overrides);
			next.put(target, quota);
			override(next);
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Sets, replaces or removes one run-time override and has the change kept
	 * elsewhere (a shared store) as one step, under the lock a
	 * {@link #reconfigure} takes: the change is checked against the
	 * configuration as it stands, kept, and only then applied. No refresh comes
	 * between the check and the write, so a store never holds an override this
	 * limit refused, and a change the store did not take is not applied here.
	 * @param target {@code ""} for the limit itself, else a plan's name
	 * @param quota the numbers, or {@code null} to remove the override
	 * @param keep keeps the change; not run when there is no override to remove
	 * @return the override replaced or removed, or {@code null}
	 * @throws PolicyValidationException if the quota does not fit; nothing changes then and {@code keep} does not run
	 * @throws RuntimeException what {@code keep} throws; nothing changes then
	 */
	public @Nullable Quota change(String target, @Nullable Quota quota, Runnable keep) {
		this.lock.lock();
		try {
			Quota previous = this.overrides.get(target);
			if (quota == null && previous == null) {
				return null;
			}
			Map<String, Quota> next = new LinkedHashMap<>(this.overrides);
			if (quota != null) {
				next.put(target, quota);
			}
			else {
				next.remove(target);
			}
			LimitDefinition<L> definition = this.configured.overriddenBy(next);
			keep.run();
			this.current = definition;
			this.overrides = Collections.unmodifiableMap(next);
			return previous;
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Removes one run-time override.
	 * @param target {@code ""} for the limit itself, else a plan's name
	 * @return whether there was one
	 */
	public boolean removeOverride(String target) {
		this.lock.lock();
		try {
			if (!this.overrides.containsKey(target)) {
				return false;
			}
			Map<String, Quota> next = new LinkedHashMap<>(this.overrides);
			next.remove(target);
			override(next);
			return true;
		}
		finally {
			this.lock.unlock();
		}
	}

}
