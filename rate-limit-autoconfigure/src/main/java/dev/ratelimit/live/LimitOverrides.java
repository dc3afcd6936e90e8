package dev.ratelimit.live;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.budget.BudgetLimit;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.AnnouncedOutage;
import dev.ratelimit.core.Causes;
import dev.ratelimit.core.Durations;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitDefinition;
import dev.ratelimit.core.LiveLimit;
import dev.ratelimit.core.PolicyValidationException;
import dev.ratelimit.core.Quota;
import dev.ratelimit.core.RateLimitPolicy;

/**
 * The run-time overrides of the configured limits' numbers: sets and removes
 * them (checked against the limit first, kept in the {@link OverrideStore},
 * then applied to the {@link LiveLimit}), and, with a shared store, polls it
 * on a daemon thread so that an override made on another instance applies
 * here too, and those made before a restart apply again after it.
 * <p>
 * The poll reads one version number and reads the overrides only when it
 * changed. A store that cannot answer changes nothing: the limits keep the
 * last overrides read, and the next poll tries again. An override that does
 * not fit its limit here (a plan this instance does not have, an entry
 * written by hand) is logged and left out; the others apply.
 */
public final class LimitOverrides implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(LimitOverrides.class);

	private final LimitRegistry registry;

	private final OverrideStore store;

	/**
	 * Makes each change, poll and refresh one step. A lock, not a monitor: it is
	 * held across the store's calls (Redis round trips with a shared store), on
	 * the thread of an endpoint's request, virtual with
	 * {@code spring.threads.virtual.enabled}; a virtual thread that parks inside
	 * a monitor pins its carrier on JDK 21 to 23.
	 */
	private final ReentrantLock lock = new ReentrantLock();

	/** Guarded by the lock. */
	private @Nullable ScheduledExecutorService poller;

	/** Guarded by the lock: the store's version last applied, or {@code null} before the first read. */
	private @Nullable Long applied;

	/** Guarded by the lock: whether the last read failed, so that an outage is logged once. */
	private boolean failing;

	/**
	 * Guarded by the lock: whether that failure was an outage the store told of
	 * ({@link AnnouncedOutage}), so that its end is left to the store's line too.
	 */
	private boolean failingAnnounced;

	/**
	 * Creates the overrides of a registry's limits.
	 * @param registry the configured limits
	 * @param store where overrides are kept
	 */
	public LimitOverrides(LimitRegistry registry, OverrideStore store) {
		this.registry = registry;
		this.store = store;
	}

	/** @return whether other instances share the overrides */
	public boolean isShared() {
		return this.store.isShared();
	}

	/**
	 * Returns the active overrides of every limit that has some.
	 * @return quotas by limit name, then by target
	 */
	public Map<String, Map<String, Quota>> active() {
		Map<String, Map<String, Quota>> active = new LinkedHashMap<>();
		for (LiveLimit<? extends Limit> live : lives()) {
			Map<String, Quota> overrides = live.overrides();
			if (!overrides.isEmpty()) {
				active.put(live.name(), overrides);
			}
		}
		return active;
	}

	/**
	 * Sets or replaces an override of a limit's numbers, in the store and here.
	 * The check against the limit, the write and the local change are one step
	 * that a refresh of the configuration cannot come between: the store never
	 * holds an override this instance refused.
	 * @param limit the limit's name
	 * @param target {@code ""} for the limit itself, else a plan's name
	 * @param quota the numbers
	 * @return the override it replaced, or {@code null}
	 * @throws IllegalArgumentException if no configured limit has the name
	 * @throws PolicyValidationException if the plan or a number does not fit the limit; nothing changes then
	 * @throws OverrideStoreException if the store did not take it; nothing changes then
	 */
	public @Nullable Quota set(String limit, String target, Quota quota) {
		this.lock.lock();
		try {
			LiveLimit<? extends Limit> live = find(limit);
			String before = describe(live.current(), target);
			// Checked before the store has it: a refused override never reaches the other instances.
			Quota previous = live.change(target, quota, () -> keep("override " + quota + " of " + label(live, target),
					() -> this.store.put(limit, target, quota)));
			logger.info("Override of " + label(live, target) + " set to " + quota + ": " + before + " -> "
					+ describe(live.current(), target)
					+ (this.store.isShared() ? " (shared with every instance)" : ""));
			return previous;
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Removes an override, from the store and here: the limit's configured numbers apply again.
	 * @param limit the limit's name
	 * @param target {@code ""} for the limit itself, else a plan's name
	 * @return the override removed, or {@code null} if there was none
	 * @throws IllegalArgumentException if no configured limit has the name
	 * @throws OverrideStoreException if the store did not take the removal; nothing changes then
	 */
	public @Nullable Quota remove(String limit, String target) {
		this.lock.lock();
		try {
			LiveLimit<? extends Limit> live = find(limit);
			String before = describe(live.current(), target);
			Quota previous = live.change(target, null, () -> keep("removal of the override of " + label(live, target),
					() -> this.store.remove(limit, target)));
			if (previous != null) {
				logger.info("Override " + previous + " of " + label(live, target) + " removed: " + before + " -> "
						+ describe(live.current(), target));
			}
			return previous;
		}
		finally {
			this.lock.unlock();
		}
	}

	private void keep(String change, Runnable write) {
		try {
			write.run();
		}
		catch (RuntimeException ex) {
			String reason = (ex.getMessage() != null) ? ex.getMessage() : ex.toString();
			throw new OverrideStoreException("The rate limit overrides' store did not take the " + change + " ("
					+ reason + "); nothing changed, try again once it answers", ex);
		}
	}

	/**
	 * Reads the store if it changed since the last read and applies what it
	 * holds. Never throws: a store that cannot answer is logged and the limits
	 * keep their overrides.
	 */
	public void poll() {
		this.lock.lock();
		try {
			try {
				long version = this.store.version();
				if (this.applied == null || this.applied != version) {
					apply(this.store.load());
					this.applied = version;
				}
				if (this.failing) {
					this.failing = false;
					String message = "Rate limit overrides are read from their store again";
					if (!this.failingAnnounced) {
						logger.info(message);
					}
					else if (logger.isDebugEnabled()) {
						// The store's own line says that decisions are back.
						logger.debug(message);
					}
				}
			}
			catch (RuntimeException ex) {
				if (!this.failing && this.applied == null) {
					// At start-up the connection has already warned that the store is unreachable.
					this.failing = true;
					this.failingAnnounced = false;
					logger.info("Rate limit overrides not read yet, their store does not answer; the configured "
							+ "numbers apply until it does");
				}
				else if (!this.failing) {
					this.failing = true;
					this.failingAnnounced = AnnouncedOutage.in(ex);
					String message = "Cannot read the rate limit overrides from their store (" + Causes.describe(ex)
							+ "); the limits keep the overrides last read, trying again";
					if (!this.failingAnnounced) {
						logger.warn(message);
					}
					else if (logger.isDebugEnabled()) {
						// The store told of the outage already, with one warning for every part of the limiter.
						logger.debug(message);
					}
				}
				else if (logger.isDebugEnabled()) {
					logger.debug("Still cannot read the rate limit overrides", ex);
				}
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Applies the store's overrides again at the next poll, whether or not it
	 * changed: after a refresh of the configuration, an override the old
	 * definition did not fit (a plan added since, say) may fit the new one.
	 */
	public void reapply() {
		this.lock.lock();
		try {
			this.applied = null;
			poll();
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Reads the store now and, when it is shared, polls it on a daemon thread.
	 * @param interval the pause between two polls
	 */
	public void start(Duration interval) {
		this.lock.lock();
		try {
			poll();
			if (this.store.isShared() && this.poller == null) {
				this.poller = Executors.newSingleThreadScheduledExecutor((task) -> {
					Thread thread = new Thread(task, "rate-limit-overrides");
					thread.setDaemon(true);
					return thread;
				});
				this.poller.scheduleWithFixedDelay(this::poll, interval.toNanos(), interval.toNanos(),
						TimeUnit.NANOSECONDS);
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	/** Stops polling. */
	@Override
	public void close() {
		this.lock.lock();
		try {
			if (this.poller != null) {
				this.poller.shutdownNow();
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	private void apply(Map<String, Map<String, Quota>> stored) {
		Set<String> unknown = new LinkedHashSet<>(stored.keySet());
		for (LiveLimit<? extends Limit> live : lives()) {
			unknown.remove(live.name());
			Map<String, Quota> wanted = fitting(live, stored.getOrDefault(live.name(), Map.of()));
			Map<String, Quota> had = live.overrides();
			if (wanted.equals(had)) {
				continue;
			}
			LimitDefinition<? extends Limit> before = live.current();
			try {
				live.override(wanted);
			}
			catch (PolicyValidationException ex) {
				// A refresh came between the check and now; it reads the store again once it is done.
				logger.warn("The stored overrides " + wanted + " of " + label(live, "")
						+ " no longer fit it after a refresh of the configuration (" + ex.getMessage()
						+ "); the refresh applies those that still fit");
				continue;
			}
			Set<String> targets = new LinkedHashSet<>(had.keySet());
			targets.addAll(wanted.keySet());
			for (String target : targets) {
				if (!Objects.equals(had.get(target), wanted.get(target))) {
					logger.info("Override of " + label(live, target) + " "
							+ ((wanted.get(target) != null) ? "set to " + wanted.get(target) : "removed")
							+ " by another instance: " + describe(before, target) + " -> "
							+ describe(live.current(), target));
				}
			}
		}
		for (String name : unknown) {
			logger.warn("Ignoring the stored overrides of '" + name + "': no rate limit, budget or concurrency cap "
					+ "of this instance has that name");
		}
	}

	private static Map<String, Quota> fitting(LiveLimit<? extends Limit> live, Map<String, Quota> stored) {
		Map<String, Quota> fitting = new LinkedHashMap<>();
		for (Map.Entry<String, Quota> override : stored.entrySet()) {
			fitting.put(override.getKey(), override.getValue());
			try {
				live.configured().overriddenBy(fitting);
			}
			catch (PolicyValidationException ex) {
				fitting.remove(override.getKey());
				logger.warn("Ignoring the stored override " + override.getValue() + " of "
						+ label(live, override.getKey()) + ": " + ex.getMessage());
			}
		}
		return fitting;
	}

	private LiveLimit<? extends Limit> find(String name) {
		return this.registry.live(name)
			.orElseThrow(() -> new IllegalArgumentException(
					"No configured rate limit, budget or concurrency cap is named '" + name + "'"));
	}

	private List<LiveLimit<? extends Limit>> lives() {
		List<LiveLimit<? extends Limit>> lives = new ArrayList<>(this.registry.rateLimits().lives());
		lives.addAll(this.registry.budgets().lives());
		lives.addAll(this.registry.concurrency().lives());
		return lives;
	}

	private static String label(LiveLimit<? extends Limit> live, String target) {
		Limit limit = live.current().limit();
		return limit.kind().label() + " '" + limit.name() + "'" + (target.isEmpty() ? "" : " plan '" + target + "'");
	}

	private static String describe(LimitDefinition<? extends Limit> definition, String target) {
		Limit limit = (target.isEmpty() || !definition.hasPlan(target)) ? definition.limit()
				: definition.select(target, null);
		return numbers(limit).toString();
	}

	/**
	 * Returns the numbers of a limit that a quota may change, by property name,
	 * for reports and logs: a rate limit's capacity and refill or window, a
	 * budget's amounts, a cap's permits.
	 * @param limit the limit
	 * @return the numbers, in a fixed order
	 */
	public static Map<String, Object> numbers(Limit limit) {
		Map<String, Object> numbers = new LinkedHashMap<>();
		if (limit instanceof RateLimitPolicy policy) {
			numbers.put("capacity", policy.capacity());
			if (policy.algorithm().isRateBased()) {
				numbers.put("refill", Objects.requireNonNull(policy.refill(), "a rate-based policy has one").toString());
			}
			else {
				numbers.put("window", Durations.format(policy.windowMicros()));
			}
		}
		else if (limit instanceof BudgetPolicy budget) {
			List<String> amounts = new ArrayList<>();
			for (BudgetLimit window : budget.limits()) {
				amounts.add(java.math.BigDecimal.valueOf(window.amountMicros(), 6).stripTrailingZeros().toPlainString());
			}
			numbers.put("amount", (amounts.size() == 1) ? amounts.get(0) : amounts);
		}
		else if (limit instanceof ConcurrencyPolicy cap) {
			numbers.put("permits", cap.permits());
		}
		return numbers;
	}

}
