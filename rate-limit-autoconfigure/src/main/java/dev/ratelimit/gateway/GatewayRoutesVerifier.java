package dev.ratelimit.gateway;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.cloud.gateway.filter.FilterDefinition;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter;
import org.springframework.cloud.gateway.route.RouteDefinition;
import org.springframework.cloud.gateway.support.ConfigurationService;

/**
 * Checks the routes of the gateway's configuration while the application
 * starts, as route rules are checked: a {@code RateLimit} filter, or a
 * {@code RequestRateLimiter} filter deciding with
 * {@link RateLimitGatewayLimiter}, that names no policy or one not configured
 * fails the start with the argument's property name. The gateway itself
 * builds its routes later, and only logs a route that fails; a route from
 * elsewhere (a discovery client, the Java DSL) fails then, with the same message.
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
		GatewayProperties gateway = this.properties.getIfAvailable();
		if (gateway == null) {
			return;
		}
		List<RouteDefinition> routes = gateway.getRoutes();
		for (int i = 0; i < routes.size(); i++) {
			verify(GatewayProperties.PREFIX + ".routes[" + i + "].filters", routes.get(i).getFilters());
		}
		verify(GatewayProperties.PREFIX + ".default-filters", gateway.getDefaultFilters());
	}

	private void verify(String prefix, List<FilterDefinition> definitions) {
		for (int j = 0; j < definitions.size(); j++) {
			FilterDefinition definition = definitions.get(j);
			String args = prefix + "[" + j + "].args.";
			if (RateLimitGatewayFilterFactory.NAME.equals(definition.getName())) {
				RateLimitGatewayFilterFactory.Config config = this.configurationService.with(this.filters)
					.name(definition.getName())
					.properties(definition.getArgs())
					.bind();
				this.filters.policies(config, args);
			}
			else if (REQUEST_RATE_LIMITER.equals(definition.getName()) && decidesHere(definition)) {
				Map<String, Object> normalized = new HashMap<>(definition.getArgs());
				RateLimitGatewayLimiter.Config config = this.configurationService.with(this.limiter.newConfig())
					.name(RateLimitGatewayLimiter.CONFIGURATION_PROPERTY_NAME)
					.normalizedProperties(normalized)
					.bind();
				this.limiter.policies(config, args);
			}
		}
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
