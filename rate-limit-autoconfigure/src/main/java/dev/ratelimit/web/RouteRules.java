package dev.ratelimit.web;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.key.AppliedLimit;
import dev.ratelimit.key.BoundPolicy;

/**
 * The route rules of {@code rate-limit.routes} and which of their limits
 * apply to a request: the policies and caps of every rule that matches, each
 * once, in rule order. Shared by every stack's route filter.
 */
public final class RouteRules {

	private final List<RouteRule> routes;

	private final RouteMatcher[] matchers;

	public RouteRules(List<RouteRule> routes) {
		this.routes = List.copyOf(routes);
		this.matchers = this.routes.stream().map(RouteMatcher::new).toArray(RouteMatcher[]::new);
	}

	/** @return the rules, in configuration order */
	public List<RouteRule> routes() {
		return this.routes;
	}

	/** @return whether there is no rule */
	public boolean isEmpty() {
		return this.routes.isEmpty();
	}

	/**
	 * Returns the policies and caps of every rule that matches a request, each
	 * once.
	 * @param exchange the request
	 * @return the limits, in rule order; {@link MatchedLimits#NONE} when no rule matches
	 */
	public MatchedLimits matching(WebExchange exchange) {
		MatchedLimits matched = MatchedLimits.NONE;
		List<BoundPolicy> policies = null;
		List<AppliedLimit<ConcurrencyPolicy>> caps = null;
		for (RouteMatcher matcher : this.matchers) {
			if (!matcher.matches(exchange)) {
				continue;
			}
			MatchedLimits limits = matcher.limits();
			if (matched == MatchedLimits.NONE) {
				// The usual case, one matching rule: its own lists, copied by nobody.
				matched = limits;
				continue;
			}
			if (policies == null || caps == null) {
				policies = new ArrayList<>(matched.policies());
				caps = new ArrayList<>(matched.caps());
			}
			for (BoundPolicy bound : limits.policies()) {
				// A policy listed by two matching routes is applied once.
				if (!contains(policies, bound.policy().name(), (listed) -> listed.policy().name())) {
					policies.add(bound);
				}
			}
			for (AppliedLimit<ConcurrencyPolicy> cap : limits.caps()) {
				if (!contains(caps, cap.limit().name(), (listed) -> listed.limit().name())) {
					caps.add(cap);
				}
			}
		}
		return (policies == null || caps == null) ? matched : new MatchedLimits(policies, caps);
	}

	private static <T> boolean contains(List<T> listed, String name, Function<T, String> nameOf) {
		for (T each : listed) {
			if (nameOf.apply(each).equals(name)) {
				return true;
			}
		}
		return false;
	}

}
