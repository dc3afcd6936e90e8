package dev.ratelimit.concurrency;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The named concurrency policies of an application, as configured under
 * {@code rate-limit.concurrency}. Immutable.
 */
public final class ConcurrencyPolicies {

	private final Map<String, ConcurrencyPolicy> byName;

	/**
	 * Creates a registry.
	 * @param policies the policies; names must be unique
	 */
	public ConcurrencyPolicies(Collection<ConcurrencyPolicy> policies) {
		Map<String, ConcurrencyPolicy> map = new LinkedHashMap<>();
		for (ConcurrencyPolicy policy : policies) {
			if (map.putIfAbsent(policy.name(), policy) != null) {
				throw new IllegalArgumentException("Duplicate concurrency policy name '" + policy.name() + "'");
			}
		}
		this.byName = Map.copyOf(map);
	}

	/**
	 * Finds a policy.
	 * @param name the name
	 * @return the policy, if configured
	 */
	public Optional<ConcurrencyPolicy> find(String name) {
		return Optional.ofNullable(this.byName.get(name));
	}

	/** @return the configured names */
	public Set<String> names() {
		return this.byName.keySet();
	}

	/** @return every policy */
	public Collection<ConcurrencyPolicy> all() {
		return this.byName.values();
	}

}
