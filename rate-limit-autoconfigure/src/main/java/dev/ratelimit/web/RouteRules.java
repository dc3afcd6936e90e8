package dev.ratelimit.web;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import org.springframework.web.util.pattern.PathPattern;

import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.key.AppliedLimit;
import dev.ratelimit.key.BoundPolicy;

/**
 * The route rules of {@code rate-limit.routes} and which of their limits
 * apply to a request: the policies and caps of every rule that matches, each
 * once, in rule order. Shared by every stack's route filter.
 * <p>
 * Paths may be left out of the caps ({@code uncapped}): the actuator's
 * endpoints, so that a cap on {@code /**} that is full, or an adaptive cap
 * shedding, never refuses a load balancer's health probe (which would pull the
 * instance from service exactly when it is busiest) nor the endpoints that
 * show why. The rules' rate limits still apply there.
 */
public final class RouteRules {

	private final List<RouteRule> routes;

	private final RouteMatcher[] matchers;

	/** Matches the paths no cap counts; {@code null} when every path is capped as its rules say. */
	private final @Nullable RouteMatcher uncapped;

	/**
	 * Creates the rules, every path capped as they say.
	 * @param routes the rules, in configuration order
	 */
	public RouteRules(List<RouteRule> routes) {
		this(routes, null);
	}

	/**
	 * Creates the rules.
	 * @param routes the rules, in configuration order
	 * @param uncapped the paths no concurrency cap of the rules counts (the management endpoints'
	 * {@code /actuator/**}); {@code null} for none
	 */
	public RouteRules(List<RouteRule> routes, @Nullable PathPattern uncapped) {
		this.routes = List.copyOf(routes);
		this.matchers = this.routes.stream().map(RouteMatcher::new).toArray(RouteMatcher[]::new);
		this.uncapped = (uncapped != null) ? new RouteMatcher(new RouteRule(uncapped, Set.of(), List.of())) : null;
	}

	/** @return the paths no cap counts, or {@code null} for none */
	public @Nullable PathPattern uncapped() {
		RouteMatcher uncapped = this.uncapped;
		return (uncapped != null) ? uncapped.pattern() : null;
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
		if (policies != null && caps != null) {
			matched = new MatchedLimits(policies, caps);
		}
		return matched.caps().isEmpty() ? matched : uncap(matched, exchange);
	}

	/** The limits without their caps on a path no cap counts: only looked at when a cap matched. */
	private MatchedLimits uncap(MatchedLimits matched, WebExchange exchange) {
		RouteMatcher uncapped = this.uncapped;
		if (uncapped == null || !uncapped.matches(exchange)) {
			return matched;
		}
		return matched.policies().isEmpty() ? MatchedLimits.NONE : new MatchedLimits(matched.policies(), List.of());
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
