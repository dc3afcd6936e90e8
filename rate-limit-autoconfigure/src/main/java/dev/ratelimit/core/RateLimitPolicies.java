package dev.ratelimit.core;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The named policies of an application, as configured under
 * {@code rate-limit.policies}. Immutable.
 */
public final class RateLimitPolicies {

	private final Map<String, RateLimitPolicy> byName;

	/**
	 * Creates a registry.
	 * @param policies the policies; names must be unique
	 */
	public RateLimitPolicies(Collection<RateLimitPolicy> policies) {
		Map<String, RateLimitPolicy> map = new LinkedHashMap<>();
		for (RateLimitPolicy policy : policies) {
			if (map.putIfAbsent(policy.name(), policy) != null) {
				throw new IllegalArgumentException("Duplicate policy name '" + policy.name() + "'");
			}
		}
		this.byName = Map.copyOf(map);
	}

	/**
	 * Finds a policy.
	 * @param name the name
	 * @return the policy, if configured
	 */
	public Optional<RateLimitPolicy> find(String name) {
		return Optional.ofNullable(this.byName.get(name));
	}

	/** @return the configured names */
	public Set<String> names() {
		return this.byName.keySet();
	}

	/** @return every policy */
	public Collection<RateLimitPolicy> all() {
		return this.byName.values();
	}

}
