package dev.ratelimit;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.LiveLimit;
import dev.ratelimit.core.NamedLimits;
import dev.ratelimit.core.RateLimitPolicy;

/**
 * Every configured limit of the application, by kind and by name, in
 * configuration order. A name belongs to one limit of one kind: the same name
 * for a rate-limit policy and a budget, say, is refused here, so that a name in
 * a header field, a metric tag, a log line or an endpoint path always means
 * one limit. The names are fixed at start-up; each limit's numbers are
 * {@link LiveLimit live}.
 */
public final class LimitRegistry {

	private final NamedLimits<RateLimitPolicy> rateLimits;

	private final NamedLimits<BudgetPolicy> budgets;

	private final NamedLimits<ConcurrencyPolicy> concurrency;

	/**
	 * Creates a registry.
	 * @param rateLimits the rate-limit policies, in configuration order
	 * @param budgets the budgets, in configuration order
	 * @param concurrency the concurrency caps, in configuration order
	 * @throws IllegalArgumentException if a name is used twice, within a kind or
	 * across kinds; the message names both places
	 */
	public LimitRegistry(Collection<RateLimitPolicy> rateLimits, Collection<BudgetPolicy> budgets,
			Collection<ConcurrencyPolicy> concurrency) {
		this(new NamedLimits<>(LimitKind.RATE_LIMIT, rateLimits), new NamedLimits<>(LimitKind.BUDGET, budgets),
				new NamedLimits<>(LimitKind.CONCURRENCY, concurrency));
	}

	/**
	 * Creates a registry of limits with their plans, per-key overrides and
	 * exemptions.
	 * @param rateLimits the rate-limit policies, in configuration order
	 * @param budgets the budgets, in configuration order
	 * @param concurrency the concurrency caps, in configuration order
	 * @throws IllegalArgumentException if a name is used twice, within a kind or
	 * across kinds; the message names both places
	 */
	public LimitRegistry(NamedLimits<RateLimitPolicy> rateLimits, NamedLimits<BudgetPolicy> budgets,
			NamedLimits<ConcurrencyPolicy> concurrency) {
		this.rateLimits = rateLimits;
		this.budgets = budgets;
		this.concurrency = concurrency;
		Map<String, Limit> byName = new HashMap<>();
		for (Limit limit : all()) {
			Limit other = byName.putIfAbsent(limit.name(), limit);
			if (other != null) {
				throw new IllegalArgumentException("The name '" + limit.name() + "' is used by both "
						+ other.kind().property(limit.name()) + " and " + limit.kind().property(limit.name()));
			}
		}
	}

	/** @return the rate-limit policies */
	public NamedLimits<RateLimitPolicy> rateLimits() {
		return this.rateLimits;
	}

	/** @return the budgets */
	public NamedLimits<BudgetPolicy> budgets() {
		return this.budgets;
	}

	/** @return the concurrency caps */
	public NamedLimits<ConcurrencyPolicy> concurrency() {
		return this.concurrency;
	}

	/**
	 * Finds a limit of any kind, as it stands now.
	 * @param name the name
	 * @return the limit, if configured
	 */
	public Optional<Limit> find(String name) {
		// As it stands now: a refresh or an override may have changed its numbers since start-up.
		return live(name).map((live) -> live.current().limit());
	}

	/**
	 * Finds a limit's live definition, of any kind.
	 * @param name the name
	 * @return the live limit, if configured
	 */
	public Optional<LiveLimit<? extends Limit>> live(String name) {
		Optional<LiveLimit<? extends Limit>> live = this.rateLimits.live(name).map((l) -> l);
		if (live.isEmpty()) {
			live = this.budgets.live(name).map((l) -> l);
		}
		return live.isPresent() ? live : this.concurrency.live(name).map((l) -> l);
	}

	/** @return every limit: the rate limits, then the budgets, then the caps, each in configuration order */
	public List<Limit> all() {
		List<Limit> all = new ArrayList<>(this.rateLimits.all());
		all.addAll(this.budgets.all());
		all.addAll(this.concurrency.all());
		return all;
	}

}
