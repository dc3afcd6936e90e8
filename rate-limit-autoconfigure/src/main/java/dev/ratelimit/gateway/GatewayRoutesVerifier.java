package dev.ratelimit.gateway;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.cloud.gateway.filter.FilterDefinition;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.filter.ratelimit.PrincipalNameKeyResolver;
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
 * builds its routes later, and only logs a route that fails; a route of a
 * discovery client fails then, with the same message (those of the Java DSL are
 * checked as their bean is built, see {@link RateLimitGatewayLimiter}).
 * It also tells the start-up report which routes apply each policy, and which
 * key resolver keys a policy applied by {@code RequestRateLimiter}; and it
 * warns when a key resolver of the application has taken the place of the
 * gateway's default, {@code principalNameKeyResolver}, on routes that name none.
 */
public final class GatewayRoutesVerifier implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(GatewayRoutesVerifier.class);

	private static final String REQUEST_RATE_LIMITER = "RequestRateLimiter";

	private final ObjectProvider<GatewayProperties> properties;

	private final ConfigurationService configurationService;

	private final RateLimitGatewayFilterFactory filters;

	private final RateLimitGatewayLimiter limiter;

	private final ObjectProvider<RequestRateLimiterGatewayFilterFactory> requestRateLimiters;

	private final ListableBeanFactory beans;

	/**
	 * Creates the verifier.
	 * @param properties the gateway's configuration
	 * @param configurationService binds filter arguments, as the gateway binds them
	 * @param filters the {@code RateLimit} filter factory
	 * @param limiter the {@code RateLimiter} of {@code RequestRateLimiter}
	 * @param requestRateLimiters the gateway's {@code RequestRateLimiter} filter factory, if any
	 * @param beans names the key resolvers
	 */
	public GatewayRoutesVerifier(ObjectProvider<GatewayProperties> properties,
			ConfigurationService configurationService, RateLimitGatewayFilterFactory filters,
			RateLimitGatewayLimiter limiter,
			ObjectProvider<RequestRateLimiterGatewayFilterFactory> requestRateLimiters, ListableBeanFactory beans) {
		this.properties = properties;
		this.configurationService = configurationService;
		this.filters = filters;
		this.limiter = limiter;
		this.requestRateLimiters = requestRateLimiters;
		this.beans = beans;
	}

	@Override
	public void afterSingletonsInstantiated() {
		// Binding every route's policies is the check: the first invalid one throws, naming its argument.
		walk((route, filter, limits, resolver) -> {
		});
		warnOfTheApplicationsDefaultKeyResolver();
	}

	/**
	 * Returns the configured routes that apply each policy, for the start-up
	 * report: {@code gateway route 'orders' (RateLimit)}.
	 * @return the routes as text, by policy name
	 */
	public Map<String, List<String>> places() {
		Map<String, List<String>> places = new LinkedHashMap<>();
		walk((route, filter, limits, resolver) -> {
			for (BoundPolicy bound : limits.policies()) {
				places.computeIfAbsent(bound.policy().name(), (name) -> new ArrayList<>()).add(place(route, filter));
			}
		});
		return places;
	}

	/**
	 * Returns, for the start-up report, the configured routes whose own key
	 * resolver keys a policy instead of the policy's key: those of
	 * {@code RequestRateLimiter} deciding with {@link RateLimitGatewayLimiter}.
	 * @return by policy name, the key resolver of each such place, as text, by
	 * the place as {@link #places()} names it
	 */
	public Map<String, Map<String, String>> keyResolvers() {
		Map<String, Map<String, String>> keyed = new LinkedHashMap<>();
		walk((route, filter, limits, resolver) -> {
			if (resolver == null) {
				return;
			}
			for (BoundPolicy bound : limits.policies()) {
				keyed.computeIfAbsent(bound.policy().name(), (name) -> new LinkedHashMap<>())
					.put(place(route, filter),
							"the KeyResolver '" + name(resolver) + "' of gateway route '" + route + "'");
			}
		});
		return keyed;
	}

	/**
	 * Returns the configured routes that hold a permit of each concurrency cap,
	 * for the start-up report.
	 * @return the routes as text, by cap name
	 */
	public Map<String, List<String>> capPlaces() {
		Map<String, List<String>> places = new LinkedHashMap<>();
		walk((route, filter, limits, resolver) -> {
			for (AppliedLimit<ConcurrencyPolicy> cap : limits.caps()) {
				places.computeIfAbsent(cap.limit().name(), (name) -> new ArrayList<>()).add(place(route, filter));
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
				visitor.visit(route, RateLimitGatewayFilterFactory.NAME, this.filters.limits(config, args), null);
			}
			else if (REQUEST_RATE_LIMITER.equals(definition.getName())) {
				RequestRateLimiterGatewayFilterFactory.Config gateway = requestRateLimiter(definition);
				if (gateway != null && decidesHere(gateway)) {
					Map<String, Object> normalized = new HashMap<>(definition.getArgs());
					RateLimitGatewayLimiter.Config config = this.configurationService.with(this.limiter.newConfig())
						.name(RateLimitGatewayLimiter.CONFIGURATION_PROPERTY_NAME)
						.normalizedProperties(normalized)
						.bind();
					visitor.visit(route, REQUEST_RATE_LIMITER, MatchedLimits.of(this.limiter.policies(config, args)),
							keyResolver(gateway));
				}
			}
		}
	}

	/**
	 * Warns when the default key resolver of {@code RequestRateLimiter} is a
	 * bean of the application: the gateway creates its own,
	 * {@code principalNameKeyResolver}, only when the application has no
	 * {@code KeyResolver} bean, so adding one silently re-keys every route
	 * that names none. The configured routes are named; those of the Java DSL
	 * cannot be read.
	 */
	private void warnOfTheApplicationsDefaultKeyResolver() {
		RequestRateLimiterGatewayFilterFactory factory = this.requestRateLimiters.getIfAvailable();
		if (factory == null || factory.getDefaultKeyResolver() instanceof PrincipalNameKeyResolver) {
			return;
		}
		List<String> routes = new ArrayList<>();
		GatewayProperties gateway = this.properties.getIfAvailable();
		if (gateway != null) {
			for (RouteDefinition route : gateway.getRoutes()) {
				routes.addAll(namingNoKeyResolver(route.getId(), route.getFilters()));
			}
			routes.addAll(namingNoKeyResolver("*", gateway.getDefaultFilters()));
		}
		String bean = name(factory.getDefaultKeyResolver());
		String which = "KeyResolver bean '" + bean + "' is the default key resolver of RequestRateLimiter in place "
				+ "of the gateway's principalNameKeyResolver (which the gateway creates only without a KeyResolver "
				+ "bean), and keys the routes that name no key-resolver: ";
		String fix = ". If that is not meant, declare '" + bean + "' with @Bean(defaultCandidate = false) and name "
				+ "it on the routes it keys (key-resolver: \"#{@" + bean + "}\"), so that the gateway's default "
				+ "stays in place";
		if (!routes.isEmpty()) {
			logger.warn(which + String.join(", ", routes) + ", and every route of the Java DSL that sets none" + fix);
		}
		else if (logger.isInfoEnabled()) {
			logger.info(which + "every route of the Java DSL that sets none" + fix);
		}
	}

	/** The route, as text, when one of its filters is a {@code RequestRateLimiter} that names no key resolver. */
	private List<String> namingNoKeyResolver(@Nullable String route, List<FilterDefinition> definitions) {
		for (FilterDefinition definition : definitions) {
			if (REQUEST_RATE_LIMITER.equals(definition.getName())) {
				RequestRateLimiterGatewayFilterFactory.Config config = requestRateLimiter(definition);
				if (config != null && config.getKeyResolver() == null) {
					return List.of("gateway route '" + route + "'");
				}
			}
		}
		return List.of();
	}

	private static String place(@Nullable String route, String filter) {
		return "gateway route '" + route + "' (" + filter + ")";
	}

	/** A key resolver's bean name, or its class for one that is no bean. */
	private String name(KeyResolver resolver) {
		for (Map.Entry<String, KeyResolver> bean : this.beans.getBeansOfType(KeyResolver.class, true, false)
			.entrySet()) {
			if (bean.getValue() == resolver) {
				return bean.getKey();
			}
		}
		return resolver.getClass().getName();
	}

	/** Sees the policies and caps of one filter. */
	@FunctionalInterface
	private interface Visitor {

		/**
		 * Sees one filter.
		 * @param route the route's id, {@code *} for the default filters
		 * @param filter the filter's name
		 * @param limits what the filter applies
		 * @param resolver what keys the policies instead of their keys, for {@code RequestRateLimiter}
		 */
		void visit(@Nullable String route, String filter, MatchedLimits limits, @Nullable KeyResolver resolver);

	}

	/**
	 * Binds a {@code RequestRateLimiter} filter's arguments as the gateway
	 * binds them; {@code null} when the gateway's filter is switched off, and
	 * the gateway reports the filter it does not know.
	 */
	private RequestRateLimiterGatewayFilterFactory.@Nullable Config requestRateLimiter(FilterDefinition definition) {
		RequestRateLimiterGatewayFilterFactory factory = this.requestRateLimiters.getIfAvailable();
		if (factory == null) {
			return null;
		}
		return this.configurationService.with(factory)
			.name(REQUEST_RATE_LIMITER)
			.properties(definition.getArgs())
			.bind();
	}

	/** Whether a RequestRateLimiter filter decides with this starter's limiter: named, or the default. */
	private boolean decidesHere(RequestRateLimiterGatewayFilterFactory.Config config) {
		RequestRateLimiterGatewayFilterFactory factory = this.requestRateLimiters.getObject();
		RateLimiter<?> used = (config.getRateLimiter() != null) ? config.getRateLimiter()
				: factory.getDefaultRateLimiter();
		return used == this.limiter;
	}

	/** The key resolver of a RequestRateLimiter filter: named, or the default. */
	private KeyResolver keyResolver(RequestRateLimiterGatewayFilterFactory.Config config) {
		KeyResolver named = config.getKeyResolver();
		return (named != null) ? named : this.requestRateLimiters.getObject().getDefaultKeyResolver();
	}

}
