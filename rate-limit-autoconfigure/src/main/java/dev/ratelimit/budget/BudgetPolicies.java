package dev.ratelimit.budget;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The named budgets of an application, as configured under
 * {@code rate-limit.budgets}. Immutable.
 */
public final class BudgetPolicies {

	private final Map<String, BudgetPolicy> byName;

	/**
	 * Creates a registry.
	 * @param policies the budgets; names must be unique
	 */
	public BudgetPolicies(Collection<BudgetPolicy> policies) {
		Map<String, BudgetPolicy> map = new LinkedHashMap<>();
		for (BudgetPolicy policy : policies) {
			if (map.putIfAbsent(policy.name(), policy) != null) {
				throw new IllegalArgumentException("Duplicate budget name '" + policy.name() + "'");
			}
		}
		this.byName = Map.copyOf(map);
	}

	/**
	 * Finds a budget.
	 * @param name the name
	 * @return the budget, if configured
	 */
	public Optional<BudgetPolicy> find(String name) {
		return Optional.ofNullable(this.byName.get(name));
	}

	/** @return the configured names */
	public Set<String> names() {
		return this.byName.keySet();
	}

	/** @return every budget */
	public Collection<BudgetPolicy> all() {
		return this.byName.values();
	}

}
