package dev.ratelimit.autoconfigure;

import java.util.List;
import java.util.Map;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.cloud.gateway.config.GatewayProperties;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.cloud.gateway.filter.factory.AbstractGatewayFilterFactory;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Fallback;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.gateway.GatewayRoutesVerifier;
import dev.ratelimit.gateway.RateLimitGatewayFilterFactory;
import dev.ratelimit.gateway.RateLimitGatewayLimiter;
import dev.ratelimit.gateway.RoutePolicies;
import dev.ratelimit.key.AppliedLimit;
import dev.ratelimit.key.BoundPolicy;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.web.reactive.ReactiveRouteLimits;

/**
 * Spring Cloud Gateway (server WebFlux) integration: the gateway filter
 * {@code RateLimit} ({@code rateLimitGatewayFilterFactory}), the
 * {@code RateLimiter} for the gateway's own {@code RequestRateLimiter}
 * ({@code rateLimitGatewayLimiter}), and the start-up check of the routes
 * that use them ({@code rateLimitGatewayRoutesVerifier}). Nothing of it loads
 * without the gateway. Before the gateway's own auto-configuration, whose
 * {@code RequestRateLimiter} exists only when a {@code RateLimiter} bean does.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class,
		beforeName = "org.springframework.cloud.gateway.config.GatewayAutoConfiguration")
@ConditionalOnClass(AbstractGatewayFilterFactory.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnProperty(name = GatewayProperties.PREFIX + ".enabled", matchIfMissing = true)
@ConditionalOnBean(LimitRegistry.class)
public class RateLimitGatewayAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitGatewayFilterFactory rateLimitGatewayFilterFactory(LimitRegistry limits, KeyExpressions expressions,
			ReactiveRouteLimits routeLimits) {
		return new RateLimitGatewayFilterFactory(routePolicies(limits, expressions), routeLimits);
	}

	/**
	 * A fallback: the default of the gateway's {@code RequestRateLimiter} when it
	 * is the only {@code RateLimiter}; beside another one (the gateway's
	 * {@code RedisRateLimiter}, present with reactive Redis), that one stays the
	 * default and a route names this one.
	 */
	@Bean
	@Fallback
	@ConditionalOnMissingBean
	RateLimitGatewayLimiter rateLimitGatewayLimiter(ConfigurationService configurationService, LimitRegistry limits,
			KeyExpressions expressions, ReactiveRouteLimits routeLimits) {
		return new RateLimitGatewayLimiter(configurationService, routePolicies(limits, expressions), routeLimits);
	}

	@Bean
	GatewayRoutesVerifier rateLimitGatewayRoutesVerifier(ObjectProvider<GatewayProperties> properties,
			ConfigurationService configurationService, RateLimitGatewayFilterFactory filters,
			RateLimitGatewayLimiter limiter, ObjectProvider<RequestRateLimiterGatewayFilterFactory> requestRateLimiters,
			ListableBeanFactory beanFactory) {
		return new GatewayRoutesVerifier(properties, configurationService, filters, limiter, requestRateLimiters,
				beanFactory);
	}

	/** The configured routes that apply each policy and cap, and what keys them, for the start-up report. */
	@Bean
	PolicyPlaces rateLimitGatewayPolicyPlaces(GatewayRoutesVerifier rateLimitGatewayRoutesVerifier) {
		return new PolicyPlaces() {

			@Override
			public Map<String, List<String>> rateLimitPlaces() {
				return rateLimitGatewayRoutesVerifier.places();
			}

			@Override
			public Map<String, List<String>> capPlaces() {
				return rateLimitGatewayRoutesVerifier.capPlaces();
			}

			@Override
			public Map<String, Map<String, String>> keyResolvers() {
				return rateLimitGatewayRoutesVerifier.keyResolvers();
			}

		};
	}

	/** Binds a gateway route's policy and cap names as a route rule's are bound: one rule for both. */
	private static RoutePolicies routePolicies(LimitRegistry limits, KeyExpressions expressions) {
		return new RoutePolicies() {

			@Override
			public List<BoundPolicy> bind(String prefix, List<String> names, List<Integer> countOn) {
				return RouteRulesBinder.policies(prefix, names, countOn, limits.rateLimits(), expressions);
			}

			@Override
			public List<AppliedLimit<ConcurrencyPolicy>> caps(String prefix, List<String> names) {
				return RouteRulesBinder.caps(prefix, names, limits.concurrency(), expressions);
			}

		};
	}

}
