package dev.ratelimit.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import reactor.core.publisher.Mono;

import org.springframework.aot.hint.annotation.RegisterReflectionForBinding;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;
import org.springframework.cloud.gateway.route.RouteDefinitionRouteLocator;
import org.springframework.cloud.gateway.support.ConfigurationService;

import dev.ratelimit.key.BoundPolicy;
import dev.ratelimit.web.reactive.ReactiveRouteLimits;

/**
 * Named policies of {@code rate-limit.policies} as the {@code RateLimiter} of
 * Spring Cloud Gateway's own {@code RequestRateLimiter} filter: the route's
 * key resolver gives the key, the route's {@code rate-limit.policies} argument
 * names the policies, and the answer carries the header fields
 * ({@code RateLimit-Policy} and {@code RateLimit}, or the legacy ones) and,
 * when refused, {@code Retry-After}.
 * <pre>
 * filters:
 *   - name: RequestRateLimiter
 *     args:
 *       rate-limiter: "#{@rateLimitGatewayLimiter}"
 *       key-resolver: "#{@userKeyResolver}"
 *       rate-limit.policies: per-user
 * </pre>
 * A route of the Java DSL names them with
 * {@code f.requestRateLimiter().rateLimiter(RateLimitGatewayLimiter.class, (c) -> c.setPolicies(List.of("per-user")))},
 * checked once every singleton exists.
 * <p>
 * The gateway's filter writes the refusal itself: its status (429 by default)
 * with an empty body, and it cannot count by outcome; the {@code RateLimit}
 * filter ({@link RateLimitGatewayFilterFactory}) answers with the HTTP
 * contract's problem and reads keys from the request itself.
 * <p>
 * The gateway creates and binds each route's {@link Config} reflectively; it
 * registers hints for its own limiters' arguments only, so this bean registers
 * those of its own for a native image.
 */
@RegisterReflectionForBinding(RateLimitGatewayLimiter.Config.class)
public class RateLimitGatewayLimiter extends AbstractRateLimiter<RateLimitGatewayLimiter.Config>
		implements SmartInitializingSingleton {

	/** The prefix of this limiter's arguments in a {@code RequestRateLimiter} filter. */
	public static final String CONFIGURATION_PROPERTY_NAME = "rate-limit";

	private final RoutePolicies routePolicies;

	private final ReactiveRouteLimits limits;

	/** The policies of each route that named some, by route id. */
	private final Map<String, List<BoundPolicy>> policies = new ConcurrentHashMap<>();

	/**
	 * Creates the limiter.
	 * @param configurationService binds the routes' arguments, as the gateway binds them
	 * @param routePolicies binds the policy names
	 * @param limits decides
	 */
	public RateLimitGatewayLimiter(ConfigurationService configurationService, RoutePolicies routePolicies,
			ReactiveRouteLimits limits) {
		super(Config.class, CONFIGURATION_PROPERTY_NAME, configurationService);
		this.routePolicies = routePolicies;
		this.limits = limits;
	}

	/**
	 * Takes a route's arguments as the gateway builds the route, and binds the
	 * policies they name.
	 */
	@Override
	public void onApplicationEvent(FilterArgsEvent event) {
		super.onApplicationEvent(event);
		Config config = getConfig().get(event.getRouteId());
		if (config != null) {
			this.policies.put(event.getRouteId(),
					policies(config, "route '" + event.getRouteId() + "' filter RequestRateLimiter."));
		}
	}

	/**
	 * Binds the policies of the routes of the Java DSL, whose
	 * {@code RequestRateLimiterSpec.rateLimiter(…)} puts their arguments in
	 * {@link #getConfig()} as the route locator bean is built, with no event:
	 * a policy not configured fails the start, naming the route.
	 */
	@Override
	public void afterSingletonsInstantiated() {
		getConfig().forEach((route, config) -> this.policies.computeIfAbsent(route,
				(id) -> policies(config, "route '" + id + "' filter RequestRateLimiter.")));
	}

	/**
	 * Binds the policies a route's arguments name, failing with a message that
	 * names the argument.
	 * @param config the arguments
	 * @param prefix names the route's arguments, ending with a dot
	 * @return the policies, in order
	 */
	List<BoundPolicy> policies(Config config, String prefix) {
		// The gateway's filter has no hook once the request is served: no counting by outcome.
		return this.routePolicies.bind(prefix + CONFIGURATION_PROPERTY_NAME + ".", config.getPolicies(), List.of());
	}

	@Override
	public Mono<Response> isAllowed(String routeId, String id) {
		List<BoundPolicy> route = this.policies.get(routeId);
		if (route == null) {
			route = this.policies.get(RouteDefinitionRouteLocator.DEFAULT_FILTERS);
		}
		if (route == null) {
			return Mono.error(new IllegalStateException("Route '" + routeId + "' uses " + getClass().getSimpleName()
					+ " without naming its policies: add the argument " + CONFIGURATION_PROPERTY_NAME
					+ ".policies to its RequestRateLimiter filter"));
		}
		return this.limits.decide(route, id).map((verdict) -> new Response(verdict.allowed(), verdict.headers()));
	}

	/**
	 * A route's arguments: {@code rate-limit.policies} in its
	 * {@code RequestRateLimiter} filter.
	 */
	public static class Config {

		private List<String> policies = new ArrayList<>();

		/** @return the names of the policies to apply, in order */
		public List<String> getPolicies() {
			return this.policies;
		}

		/** @param policies the names of the policies to apply, in order */
		public void setPolicies(List<String> policies) {
			this.policies = policies;
		}

	}

}
