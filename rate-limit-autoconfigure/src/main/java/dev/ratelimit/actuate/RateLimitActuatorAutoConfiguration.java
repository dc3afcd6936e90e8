package dev.ratelimit.actuate;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.PropertiesEndpointAccessResolver;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.actuate.endpoint.EndpointAccessResolver;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;

import dev.ratelimit.live.LimitOverrides;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.autoconfigure.RateLimitProperties;
import dev.ratelimit.aop.AnnotatedBeans;
import dev.ratelimit.insight.HeavyHitters;
import dev.ratelimit.insight.FleetExchange;
import dev.ratelimit.aop.LimitAnnotations;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.concurrency.AdaptiveConcurrencyLimiter;
import dev.ratelimit.concurrency.DistributedConcurrencyLimiter;
import dev.ratelimit.concurrency.LocalConcurrencyLimiter;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.plans.RecentCallers;
import dev.ratelimit.redis.RedisLimiterConnection;

/**
 * Actuator support of the rate limiter: the {@code ratelimits} endpoint (when
 * it is available, that is enabled and exposed) and the {@code rateLimit}
 * health contributor (unless {@code management.health.rate-limit.enabled=false}).
 * Backs off without Spring Boot's actuator, and when the limiter itself is off.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnClass(name = { "org.springframework.boot.actuate.endpoint.annotation.Endpoint",
		"org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint" })
@ConditionalOnBean(RateLimiter.class)
public class RateLimitActuatorAutoConfiguration {

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnAvailableEndpoint(RateLimitEndpoint.class)
	static class EndpointConfiguration {

		@Bean
		@ConditionalOnMissingBean
		PolicyUsages rateLimitPolicyUsages(RateLimitProperties properties) {
			return new PolicyUsages(routes(properties));
		}

		@Bean
		@ConditionalOnMissingBean
		PolicyUsageScanner rateLimitPolicyUsageScanner(AnnotatedBeans beans, PolicyUsages usages,
				LimitRegistry limits, LimitAnnotations annotations) {
			return new PolicyUsageScanner(beans, usages, limits, annotations);
		}

		@Bean
		@ConditionalOnMissingBean
		RateLimitEndpoint rateLimitEndpoint(LimitRegistry limits, PolicyUsages usages, RateLimitBackend backend, LimitKeys keys,
				ObjectProvider<CostBudgets> costBudgets, LocalConcurrencyLimiter localConcurrency,
				ObjectProvider<DistributedConcurrencyLimiter> distributedConcurrency,
				ObjectProvider<AdaptiveConcurrencyLimiter> adaptiveConcurrency, LimitOverrides overrides,
				ObjectProvider<RecentCallers> recentCallers, ObjectProvider<HeavyHitters> heavyHitters,
				ObjectProvider<FleetExchange> fleetExchange, RateLimitProperties properties) {
			RateLimitEndpoint endpoint = new RateLimitEndpoint(limits, usages, backend, keys,
					costBudgets.getIfAvailable(), localConcurrency, distributedConcurrency.getIfAvailable(),
					adaptiveConcurrency.getIfAvailable(), overrides, recentCallers.getIfAvailable());
			HeavyHitters counts = heavyHitters.getIfAvailable();
			if (counts != null) {
				endpoint.setTopKeys(new TopKeysReport(counts, fleetExchange.getIfAvailable(),
						properties.getHeavyHitters().getListed(), properties.getHeavyHitters().isHashKeys()));
			}
			return endpoint;
		}

		// A listener like any other: counts each plan's recent callers, so that an override says whom it reaches.
		@Bean
		@ConditionalOnMissingBean
		RecentCallers rateLimitRecentCallers(TimeSource time, ObjectProvider<FleetExchange> fleetExchange) {
			return new RecentCallers(time, RecentCallers.DEFAULT_WINDOW, fleetExchange.getIfAvailable());
		}

		@Bean
		@ConditionalOnMissingBean
		@ConditionalOnAvailableEndpoint(endpoint = RateLimitEndpoint.class, exposure = EndpointExposure.WEB)
		RateLimitEndpointWebExtension rateLimitEndpointWebExtension(RateLimitEndpoint endpoint) {
			return new RateLimitEndpointWebExtension(endpoint);
		}

		@Bean
		EndpointWriteAccessCheck rateLimitEndpointWriteAccessCheck(Environment environment,
				ObjectProvider<EndpointAccessResolver> access, ListableBeanFactory beanFactory) {
			EndpointAccessResolver resolver = access.getIfAvailable();
			return new EndpointWriteAccessCheck(environment,
					(resolver != null) ? resolver : new PropertiesEndpointAccessResolver(environment), beanFactory);
		}

		// Loops rather than streams: each lambda is a class spun at start-up.
		private static List<PolicyUsages.Route> routes(RateLimitProperties properties) {
			List<PolicyUsages.Route> routes = new ArrayList<>();
			for (RateLimitProperties.Route route : properties.getRoutes()) {
				List<String> methods = new ArrayList<>();
				for (String method : route.getMethods()) {
					methods.add(method.strip().toUpperCase(Locale.ROOT));
				}
				List<String> limits = new ArrayList<>();
				for (String policy : route.getPolicies()) {
					limits.add(policy.strip());
				}
				for (String cap : route.getConcurrency()) {
					limits.add(cap.strip());
				}
				routes.add(new PolicyUsages.Route(route.getPattern(), List.copyOf(methods), List.copyOf(limits)));
			}
			return List.copyOf(routes);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
	static class HealthConfiguration {

		// One level down: Spring loads every condition class of a configuration before it
		// evaluates any, so this one must wait until the health module is known to be present.
		@Configuration(proxyBeanMethods = false)
		@ConditionalOnEnabledHealthIndicator("ratelimit")
		static class HealthIndicatorConfiguration {

			// A listener like any other: the limiters pick it up with the application's own.
			@Bean
			StoreAvailability rateLimitStoreAvailability(TimeSource time) {
				return new StoreAvailability(time);
			}

			// Named so that the contributor is "rateLimit": Boot strips the HealthIndicator suffix.
			@Bean
			@ConditionalOnMissingBean(name = "rateLimitHealthIndicator")
			RateLimitHealthIndicator rateLimitHealthIndicator(RateLimitBackend backend,
					ObjectProvider<RedisLimiterConnection> redis, RateLimitProperties properties,
					LimitRegistry limits, StoreAvailability stores) {
				return new RateLimitHealthIndicator(backend, redis.getIfAvailable(),
						properties.getRedis().getTimeout(), new FailClosedPolicies(limits), stores);
			}

		}

	}

}
