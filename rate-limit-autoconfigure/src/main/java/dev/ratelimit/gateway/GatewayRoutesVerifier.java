package dev.ratelimit.gateway;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.cloud.gateway.filter.FilterDefinition;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.cloud.gateway.route.RouteDefinition;
import org.springframework.cloud.gateway.support.ConfigurationService;

import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.key.AppliedLimit;
import dev.ratelimit.key.BoundPolicy;
import dev.ratelimit.web.MatchedLimits;

/**
 * Checks the routes of the gateway's configuration while the application
 * starts, as route rules are checked: a {@code RateLimit} filter, or a
 * {@code RequestRateLimiter} filter deciding with
 * {@link RateLimitGatewayLimiter}, that names no policy or one not configured
 * fails the start with the argument's property name. The gateway itself
 * builds its routes later, and only logs a route that fails; a route from
 * elsewhere (a discovery client, the Java DSL) fails then, with the same message.
 * It also tells the start-up report which routes apply each policy.
 */
public final class GatewayRoutesVerifier implements SmartInitializingSingleton {

	private static final String REQUEST_RATE_LIMITER = "RequestRateLimiter";

	private final ObjectProvider<GatewayProperties> properties;

	private final ConfigurationService configurationService;

	private final RateLimitGatewayFilterFactory filters;

	private final RateLimitGatewayLimiter limiter;

	private final ObjectProvider<RequestRateLimiterGatewayFilterFactory> requestRateLimiters;

	/**
	 * Creates the verifier.
	 * @param properties the gateway's configuration
	 * @param configurationService binds filter arguments, as the gateway binds them
	 * @param filters the {@code RateLimit} filter factory
	 * @param limiter the {@code RateLimiter} of {@code RequestRateLimiter}
	 * @param requestRateLimiters the gateway's {@code RequestRateLimiter} filter factory, if any
	 */
	public GatewayRoutesVerifier(ObjectProvider<GatewayProperties> properties,
			ConfigurationService configurationService, RateLimitGatewayFilterFactory filters,
			RateLimitGatewayLimiter limiter,
			ObjectProvider<RequestRateLimiterGatewayFilterFactory> requestRateLimiters) {
		this.properties = properties;
		this.configurationService = configurationService;
		this.filters = filters;
		this.limiter = limiter;
		this.requestRateLimiters = requestRateLimiters;
	}

	@Override
	public void afterSingletonsInstantiated() {
		// Binding every route's policies is the check: the first invalid one throws, naming its argument.
		walk((route, filter, limits) -> {
		});
	}

	/**
	 * Returns the configured routes that apply each policy, for the start-up
	 * report: {@code gateway route 'orders' (RateLimit)}.
	 * @return the routes as text, by policy name
	 */
	public Map<String, List<String>> places() {
		Map<String, List<String>> places = new LinkedHashMap<>();
		walk((route, filter, limits) -> {
			for (BoundPolicy bound : limits.policies()) {
				places.computeIfAbsent(bound.policy().name(), (name) -> new ArrayList<>())
					.add("gateway route '" + route + "' (" + filter + ")");
			}
		});
		return places;
	}

	/**
	 * Returns the configured routes that hold a permit of each concurrency cap,
	 * for the start-up report.
	 * @return the routes as text, by cap name
	 */
	public Map<String, List<String>> capPlaces() {
		Map<String, List<String>> places = new LinkedHashMap<>();
		walk((route, filter, limits) -> {
			for (AppliedLimit<ConcurrencyPolicy> cap : limits.caps()) {
				places.computeIfAbsent(cap.limit().name(), (name) -> new ArrayList<>())
					.add("gateway route '" + route + "' (" + filter + ")");
			}
		});
		return places;
	}

	/** Binds the policies of every configured filter that applies some, failing on the first invalid one. */
	private void walk(Visitor visitor) {
		GatewayProperties gateway = this.properties.getIfAvailable();
		if (gateway == null) {
			return;
		}
		List<RouteDefinition> routes = gateway.getRoutes();
		for (int i = 0; i < routes.size(); i++) {
			walk(GatewayProperties.PREFIX + ".routes[" + i + "].filters", routes.get(i).getId(),
					routes.get(i).getFilters(), visitor);
		}
		walk(GatewayProperties.PREFIX + ".default-filters", "*", gateway.getDefaultFilters(), visitor);
	}

	private void walk(String prefix, @Nullable String route, List<FilterDefinition> definitions, Visitor visitor) {
		for (int j = 0; j < definitions.size(); j++) {
			FilterDefinition definition = definitions.get(j);
			String args = prefix + "[" + j + "].args.";
			if (RateLimitGatewayFilterFactory.NAME.equals(definition.getName())) {
				RateLimitGatewayFilterFactory.Config config = this.configurationService.with(this.filters)
					.name(definition.getName())
					.properties(definition.getArgs())
					.bind();
				visitor.visit(route, RateLimitGatewayFilterFactory.NAME, this.filters.limits(config, args));
			}
			else if (REQUEST_RATE_LIMITER.equals(definition.getName()) && decidesHere(definition)) {
				Map<String, Object> normalized = new HashMap<>(definition.getArgs());
				RateLimitGatewayLimiter.Config config = this.configurationService.with(this.limiter.newConfig())
					.name(RateLimitGatewayLimiter.CONFIGURATION_PROPERTY_NAME)
					.normalizedProperties(normalized)
					.bind();
				visitor.visit(route, REQUEST_RATE_LIMITER, MatchedLimits.of(this.limiter.policies(config, args)));
			}
		}
	}

	/** Sees the policies and caps of one filter. */
	@FunctionalInterface
	private interface Visitor {

		void visit(@Nullable String route, String filter, MatchedLimits limits);

	}

	/** Whether a RequestRateLimiter filter decides with this starter's limiter: named, or the default. */
	private boolean decidesHere(FilterDefinition definition) {
		RequestRateLimiterGatewayFilterFactory factory = this.requestRateLimiters.getIfAvailable();
		if (factory == null) {
			// Switched off: the gateway reports the filter it does not know.
			return false;
		}
		RequestRateLimiterGatewayFilterFactory.Config config = this.configurationService.with(factory)
			.name(REQUEST_RATE_LIMITER)
			.properties(definition.getArgs())
			.bind();
		RateLimiter<?> used = (config.getRateLimiter() != null) ? config.getRateLimiter()
				: factory.getDefaultRateLimiter();
		return used == this.limiter;
	}

}
