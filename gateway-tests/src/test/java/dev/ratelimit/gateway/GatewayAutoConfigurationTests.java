package dev.ratelimit.gateway;

import org.junit.jupiter.api.Test;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;
import org.springframework.context.ConfigurableApplicationContext;

import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.autoconfigure.RateLimitGatewayAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gateway integration loads in a WebFlux application with Spring Cloud
 * Gateway, under the bean names the documentation gives, and nothing of it
 * without the gateway, in a servlet application or with the gateway switched
 * off.
 */
class GatewayAutoConfigurationTests {

	private static final String[] BEANS = { "rateLimitGatewayFilterFactory", "rateLimitGatewayLimiter",
			"rateLimitGatewayRoutesVerifier" };

	@Test
	void aGatewayGetsTheFilterTheLimiterAndTheCheck() {
		try (ConfigurableApplicationContext context = gateway()) {
			for (String bean : BEANS) {
				assertThat(context.containsBean(bean)).as(bean).isTrue();
			}
			assertThat(context.getBean("rateLimitGatewayFilterFactory")).isInstanceOf(RateLimitGatewayFilterFactory.class);
			assertThat(context.getBean("rateLimitGatewayLimiter")).isInstanceOf(RateLimitGatewayLimiter.class);
			// The gateway's RequestRateLimiter exists only with a RateLimiter bean, such as ours, registered before it.
			assertThat(context.containsBean("requestRateLimiterGatewayFilterFactory")).isTrue();
		}
	}

	@Test
	void theStartersLimiterIsRequestRateLimitersDefaultWhenItIsTheOnlyOne() {
		// Without the gateway's RedisRateLimiter (which reactive Redis on this classpath brings, see the BlockHound test).
		try (ConfigurableApplicationContext context = gateway("spring.cloud.gateway.server.webflux.redis.enabled=false")) {
			assertThat(context.getBean(RequestRateLimiterGatewayFilterFactory.class).getDefaultRateLimiter())
				.isSameAs(context.getBean("rateLimitGatewayLimiter"));
		}
	}

	@Test
	void withoutTheGatewayNothingOfItLoads() {
		new ReactiveWebApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitGatewayAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader("org.springframework.cloud.gateway"))
			.withPropertyValues("rate-limit.policies.per-ip.capacity=5", "rate-limit.policies.per-ip.refill=5/1s")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				for (String bean : BEANS) {
					assertThat(context).doesNotHaveBean(bean);
				}
			});
	}

	@Test
	void aServletApplicationGetsNoneOfIt() {
		new WebApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitGatewayAutoConfiguration.class))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				for (String bean : BEANS) {
					assertThat(context).doesNotHaveBean(bean);
				}
			});
	}

	@Test
	void aGatewaySwitchedOffGetsNoneOfIt() {
		// Its Redis part too, which the gateway does not switch off with the rest (it then fails to start).
		try (ConfigurableApplicationContext context = gateway("spring.cloud.gateway.server.webflux.enabled=false",
				"spring.cloud.gateway.server.webflux.redis.enabled=false")) {
			for (String bean : BEANS) {
				assertThat(context.containsBean(bean)).as(bean).isFalse();
			}
		}
	}

	@Test
	void theStartersRateLimitingCanBeSwitchedOffInAGateway() {
		try (ConfigurableApplicationContext context = gateway("rate-limit.enabled=false")) {
			for (String bean : BEANS) {
				assertThat(context.containsBean(bean)).as(bean).isFalse();
			}
		}
	}

	/** A whole WebFlux gateway application, started on a free port. */
	private static ConfigurableApplicationContext gateway(String... properties) {
		return new SpringApplicationBuilder(GatewayRouteCheckTests.App.class).web(WebApplicationType.REACTIVE)
			.properties("server.port=0", "rate-limit.policies.per-ip.capacity=5", "rate-limit.policies.per-ip.refill=5/1s")
			.properties(properties)
			.run();
	}

}
