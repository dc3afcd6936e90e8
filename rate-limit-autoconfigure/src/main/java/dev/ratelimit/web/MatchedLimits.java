package dev.ratelimit.web;

import java.util.List;

import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.key.AppliedLimit;
import dev.ratelimit.key.BoundPolicy;

/**
 * What the route rules matching a request apply to it: their rate-limit
 * policies and their concurrency caps, each once, in rule order.
 *
 * @param policies the rate-limit policies
 * @param caps the concurrency caps
 */
record MatchedLimits(List<BoundPolicy> policies, List<AppliedLimit<ConcurrencyPolicy>> caps) {

	/** Nothing matched. */
	static final MatchedLimits NONE = new MatchedLimits(List.of(), List.of());

	/** @return whether nothing applies */
	boolean isEmpty() {
		return this.policies.isEmpty() && this.caps.isEmpty();
	}

}
