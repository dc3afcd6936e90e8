package dev.ratelimit.gateway;

import java.util.List;

import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.key.AppliedLimit;
import dev.ratelimit.key.BoundPolicy;

/**
 * Binds the named policies of {@code rate-limit.policies} and caps of
 * {@code rate-limit.concurrency} that a gateway route applies, exactly as a
 * route rule of {@code rate-limit.routes} binds them: each name must be
 * configured, and counting by outcome is checked against each policy.
 */
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

	/**
	 * Binds the concurrency caps a route holds a permit of, as a route rule's.
	 * @param prefix names the route's arguments in errors, ending with a dot
	 * @param names the cap names, each configured; empty for none
	 * @return the bound caps, in order
	 * @throws dev.ratelimit.core.RateLimitConfigurationException naming the argument, for an unknown name
	 */
	List<AppliedLimit<ConcurrencyPolicy>> caps(String prefix, List<String> names);

}
