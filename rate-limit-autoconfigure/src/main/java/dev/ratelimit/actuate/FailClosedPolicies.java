package dev.ratelimit.actuate;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.RateLimitPolicy;

/**
 * The configured policies that refuse calls while Redis cannot answer: rate
 * limits with {@code failure-mode: closed} (shadow ones never refuse), budgets
 * with {@code failure-mode: closed} (the default for budgets) and distributed
 * concurrency caps with {@code failure-mode: closed}. A Redis outage is an
 * outage of the application only through them. Inline policies of annotations
 * fail open, local concurrency caps never ask Redis.
 */
final class FailClosedPolicies {

	private final Map<String, List<String>> names;

	/**
	 * Finds the fail-closed policies among the configured ones.
	 * @param limits the configured limits
	 */
	public FailClosedPolicies(LimitRegistry limits) {
		Map<String, List<String>> names = new LinkedHashMap<>();
		add(names, "rateLimits", limits.rateLimits().all()
			.stream()
			.filter((policy) -> policy.failureMode() == FailureMode.CLOSED && !policy.shadow())
			.map(RateLimitPolicy::name)
			.toList());
		add(names, "budgets", limits.budgets().all()
			.stream()
			.filter((budget) -> budget.failureMode() == FailureMode.CLOSED)
			.map(BudgetPolicy::name)
			.toList());
		add(names, "concurrency", limits.concurrency().all()
			.stream()
			.filter((cap) -> cap.scope() == ConcurrencyPolicy.Scope.DISTRIBUTED
					&& cap.failureMode() == FailureMode.CLOSED)
			.map(ConcurrencyPolicy::name)
			.toList());
		this.names = Collections.unmodifiableMap(names);
	}

	/**
	 * Returns whether no policy fails closed.
	 * @return whether none does
	 */
	public boolean isEmpty() {
		return this.names.isEmpty();
	}

	/**
	 * Returns the fail-closed policies' names by kind ({@code rateLimits},
	 * {@code budgets}, {@code concurrency}), kinds without any left out.
	 * @return the names
	 */
	public Map<String, List<String>> names() {
		return this.names;
	}

	private static void add(Map<String, List<String>> names, String kind, List<String> found) {
		if (!found.isEmpty()) {
			names.put(kind, List.copyOf(found));
		}
	}

}
