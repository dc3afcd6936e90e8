package dev.ratelimit.web;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import dev.ratelimit.key.BoundPolicy;

/**
 * The route rules of {@code rate-limit.routes} and which of their policies
 * apply to a request: the policies of every rule that matches, each once, in
 * rule order. Shared by the servlet and the reactive route filters, which
 * differ only in how a request's path reaches {@link RouteMatcher}.
 */
final class RouteRules {

	private final List<RouteRule> routes;

	private final RouteMatcher[] matchers;

	RouteRules(List<RouteRule> routes) {
		this.routes = List.copyOf(routes);
		this.matchers = this.routes.stream().map(RouteMatcher::new).toArray(RouteMatcher[]::new);
	}

	/** @return the rules, in configuration order */
	List<RouteRule> routes() {
		return this.routes;
	}

	/** @return whether there is no rule */
	boolean isEmpty() {
		return this.routes.isEmpty();
	}

	/**
	 * Returns the policies of every rule that matches a request, each once.
	 * @param matches whether a rule's matcher matches the request
	 * @return the policies, in rule order; empty when no rule matches
	 */
	List<BoundPolicy> matching(Predicate<RouteMatcher> matches) {
		List<BoundPolicy> matched = List.of();
		boolean merged = false;
		for (RouteMatcher matcher : this.matchers) {
			if (!matches.test(matcher)) {
				continue;
			}
			List<BoundPolicy> policies = matcher.policies();
			if (matched.isEmpty()) {
				// The usual case, one matching rule: its own list, copied by nobody.
				matched = policies;
				continue;
			}
			if (!merged) {
				matched = new ArrayList<>(matched);
				merged = true;
			}
			for (BoundPolicy bound : policies) {
				// A policy listed by two matching routes is applied once.
				if (!contains(matched, bound.policy().name())) {
					matched.add(bound);
				}
			}
		}
		return matched;
	}

	private static boolean contains(List<BoundPolicy> policies, String name) {
		for (BoundPolicy bound : policies) {
			if (bound.policy().name().equals(name)) {
				return true;
			}
		}
		return false;
	}

}
