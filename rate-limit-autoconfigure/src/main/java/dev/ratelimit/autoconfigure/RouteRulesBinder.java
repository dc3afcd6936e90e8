package dev.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.UnaryOperator;

import org.jspecify.annotations.Nullable;

import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import org.springframework.web.util.pattern.PatternParseException;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.NamedLimits;
import dev.ratelimit.core.RateLimitConfigurationException;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.key.AppliedLimit;
import dev.ratelimit.key.BoundPolicy;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.key.OutcomeRule;
import dev.ratelimit.web.RouteRule;

/**
 * Builds the route rules from {@code rate-limit.routes}, failing with the
 * exact property name on the first invalid value.
 */
final class RouteRulesBinder {

	private static final Set<String> METHODS = Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS",
			"TRACE");

	private RouteRulesBinder() {
	}

	static List<RouteRule> bind(RateLimitProperties properties, LimitRegistry limits, KeyExpressions expressions) {
		List<RouteRule> rules = new ArrayList<>();
		List<RateLimitProperties.Route> routes = properties.getRoutes();
		for (int i = 0; i < routes.size(); i++) {
			rules.add(bind(prefix(i), routes.get(i), limits, expressions));
		}
		return rules;
	}

	/**
	 * Checks a route rule without building it, so that route rules are checked
	 * in applications without the servlet filter too.
	 * @param index the rule's index in {@code rate-limit.routes}
	 * @param route the rule
	 * @param policyNames the names of the configured policies
	 * @param capNames the names of the configured concurrency caps
	 */
	static void check(int index, RateLimitProperties.Route route, Collection<String> policyNames,
			Collection<String> capNames) {
		String prefix = prefix(index);
		pattern(prefix, route);
		methods(prefix, route);
		limitNames(prefix, route);
		if (!route.getPolicies().isEmpty()) {
			policyNames(prefix, route.getPolicies(), policyNames);
		}
		capNames(prefix, route.getConcurrency(), capNames);
		countOn(prefix, route.getCountOn());
	}

	private static RouteRule bind(String prefix, RateLimitProperties.Route route, LimitRegistry limits,
			KeyExpressions expressions) {
		PathPattern pattern = pattern(prefix, route);
		Set<String> methods = methods(prefix, route);
		limitNames(prefix, route);
		List<BoundPolicy> bound = route.getPolicies().isEmpty() ? List.of()
				: policies(prefix, route.getPolicies(), route.getCountOn(), limits.rateLimits(), expressions);
		return new RouteRule(pattern, Set.copyOf(methods), bound,
				caps(prefix, route.getConcurrency(), limits.concurrency(), expressions));
	}

	/** A rule limits with policies, caps or both; never with nothing. */
	private static void limitNames(String prefix, RateLimitProperties.Route route) {
		if (route.getPolicies().isEmpty() && route.getConcurrency().isEmpty()) {
			throw invalid(prefix + "policies", "[]",
					"list at least one policy name (or a concurrency cap under " + prefix + "concurrency)");
		}
	}

	private static List<String> capNames(String prefix, List<String> listed, Collection<String> configured) {
		List<String> names = new ArrayList<>();
		for (String name : listed) {
			if (name == null || !configured.contains(name.strip())) {
				throw invalid(prefix + "concurrency", name,
						"no concurrency cap named '" + name + "' is configured (configured: " + configured + ")");
			}
			names.add(name.strip());
		}
		return names;
	}

	/**
	 * Binds the concurrency caps a route holds a permit of, as a route rule
	 * binds them: for a route rule, and for a gateway route's {@code RateLimit}
	 * filter.
	 * @param prefix names the properties in errors, ending with a dot ({@code rate-limit.routes[0].})
	 * @param names the cap names, each configured; empty for none
	 * @param caps the configured caps
	 * @param expressions parses keys
	 * @return the bound caps, in order
	 */
	static List<AppliedLimit<ConcurrencyPolicy>> caps(String prefix, List<String> names,
			NamedLimits<ConcurrencyPolicy> caps, KeyExpressions expressions) {
		List<AppliedLimit<ConcurrencyPolicy>> bound = new ArrayList<>();
		for (String name : capNames(prefix, names, caps.names())) {
			bound.add(AppliedLimit.of(caps.live(name).orElseThrow(), expressions));
		}
		return List.copyOf(bound);
	}

	/**
	 * Binds the policies a route applies, as a route rule binds them: for a
	 * route rule, and for a gateway route's {@code RateLimit} filter.
	 * @param prefix names the properties in errors, ending with a dot ({@code rate-limit.routes[0].})
	 * @param names the policy names, at least one, each configured
	 * @param countOn the statuses that count, empty for every status
	 * @param policies the configured policies
	 * @param expressions parses keys
	 * @return the bound policies, in order
	 */
	static List<BoundPolicy> policies(String prefix, List<String> names, List<Integer> countOn,
			NamedLimits<RateLimitPolicy> policies, KeyExpressions expressions) {
		Set<Integer> statuses = countOn(prefix, countOn);
		OutcomeRule countWhen = statuses.isEmpty() ? null : OutcomeRule.statuses(statuses);
		List<BoundPolicy> bound = new ArrayList<>();
		for (String name : policyNames(prefix, names, policies.names())) {
			RateLimitPolicy policy = policies.find(name).orElseThrow();
			if (countWhen != null && policy.outcomeCountingProblem() != null) {
				throw invalid(prefix + "count-on", countOn, "counts requests by outcome, which policy '" + name
						+ "' cannot: " + policy.outcomeCountingProblem());
			}
			AppliedLimit<RateLimitPolicy> applied = (countWhen != null)
					? new AppliedLimit<>(policies.live(name).orElseThrow(),
							BoundPolicy.countedByOutcome(UnaryOperator.identity()), null, expressions)
					: AppliedLimit.of(policies.live(name).orElseThrow(), expressions);
			bound.add(new BoundPolicy(applied, null, 1, countWhen));
		}
		return List.copyOf(bound);
	}

	private static String prefix(int index) {
		return "rate-limit.routes[" + index + "].";
	}

	private static PathPattern pattern(String prefix, RateLimitProperties.Route route) {
		if (route.getPattern() == null || route.getPattern().isBlank()) {
			throw invalid(prefix + "pattern", null, "a path pattern such as /api/** is required");
		}
		try {
			return PathPatternParser.defaultInstance.parse(route.getPattern());
		}
		catch (PatternParseException ex) {
			throw invalid(prefix + "pattern", route.getPattern(), ex.getMessage());
		}
	}

	private static Set<String> methods(String prefix, RateLimitProperties.Route route) {
		Set<String> methods = new LinkedHashSet<>();
		for (String method : route.getMethods()) {
			String upper = method.strip().toUpperCase(Locale.ROOT);
			if (!METHODS.contains(upper)) {
				throw invalid(prefix + "methods", method, "not an HTTP method; use one of " + METHODS);
			}
			methods.add(upper);
		}
		return methods;
	}

	private static Set<Integer> countOn(String prefix, List<Integer> countOn) {
		Set<Integer> statuses = new LinkedHashSet<>();
		for (Integer status : countOn) {
			if (status == null || status < 100 || status > 599) {
				throw invalid(prefix + "count-on", status, "not an HTTP status; use statuses from 100 to 599");
			}
			statuses.add(status);
		}
		return statuses;
	}

	private static List<String> policyNames(String prefix, List<String> listed, Collection<String> configured) {
		if (listed.isEmpty()) {
			throw invalid(prefix + "policies", "[]", "list at least one policy name");
		}
		List<String> names = new ArrayList<>();
		for (String name : listed) {
			if (!configured.contains(name.strip())) {
				throw invalid(prefix + "policies", name,
						"no policy named '" + name + "' is configured (configured: " + configured + ")");
			}
			names.add(name.strip());
		}
		return names;
	}

	private static RateLimitConfigurationException invalid(String property, @Nullable Object value, String reason) {
		return InvalidProperty.of(property, value, reason, null);
	}

}
