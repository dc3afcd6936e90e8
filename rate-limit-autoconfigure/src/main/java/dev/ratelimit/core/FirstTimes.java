package dev.ratelimit.core;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Tells the first time something happens for a policy, for a failure logged at
 * warning level once per policy and at debug level after that, so that a rule
 * or a store failing on every call cannot flood the log. Holds policy names
 * only, so it is bounded by the configuration.
 */
public final class FirstTimes {

	private final Set<String> seen = ConcurrentHashMap.newKeySet();

	/**
	 * Returns whether this is the first time for a policy.
	 * @param policy the policy's name
	 * @return {@code true} the first time only
	 */
	public boolean first(String policy) {
		return this.seen.add(policy);
	}

}
