package dev.ratelimit.web;

import java.util.List;

import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.key.AppliedLimit;
import dev.ratelimit.key.BoundPolicy;

/**
 * What a route applies to a request: the rate-limit policies and the
 * concurrency caps of the route rules that match it, or a gateway route's
 * policies, each once, in order.
 *
 * @param policies the rate-limit policies
 * @param caps the concurrency caps
 */
public record MatchedLimits(List<BoundPolicy> policies, List<AppliedLimit<ConcurrencyPolicy>> caps) {

	/** Nothing matched. */
	public static final MatchedLimits NONE = new MatchedLimits(List.of(), List.of());

	/**
	 * Returns the limits of policies only, with no concurrency cap.
	 * @param policies the policies, each once, in order
	 * @return the limits
	 */
	public static MatchedLimits of(List<BoundPolicy> policies) {
		return new MatchedLimits(List.copyOf(policies), List.of());
	}

	/** @return whether nothing applies */
	public boolean isEmpty() {
		return this.policies.isEmpty() && this.caps.isEmpty();
	}

}
