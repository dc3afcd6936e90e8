package dev.ratelimit.gateway;

import java.util.List;

import dev.ratelimit.key.BoundPolicy;

/**
 * Binds the named policies of {@code rate-limit.policies} that a gateway route
 * applies, exactly as a route rule of {@code rate-limit.routes} binds them:
 * each name must be configured, and counting by outcome is checked against
 * each policy.
 */
@FunctionalInterface
public interface RoutePolicies {

	/**
	 * Binds a route's policies.
	 * @param prefix names the route's arguments in errors, ending with a dot
	 * @param names the policy names, at least one
	 * @param countOn the statuses that count, empty for every status
	 * @return the bound policies, in order
	 * @throws dev.ratelimit.core.RateLimitConfigurationException naming the argument, for an unknown
	 * name, no name or a policy that cannot count by outcome
	 */
	List<BoundPolicy> bind(String prefix, List<String> names, List<Integer> countOn);

}
