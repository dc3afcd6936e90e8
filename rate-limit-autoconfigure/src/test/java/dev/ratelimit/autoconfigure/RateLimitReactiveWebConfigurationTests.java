package dev.ratelimit.autoconfigure;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.server.WebFilter;

import dev.ratelimit.key.RequestBinding;
import dev.ratelimit.web.reactive.RateLimitWebFilter;
import dev.ratelimit.web.reactive.ReactiveRequestBinding;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The WebFlux integration's filters: the route filter with route rules, which
 * also puts each request's exchange in the Reactor context for the limited
 * methods; without route rules, Spring's {@link ServerWebExchangeContextFilter}
 * does that instead. Never both, so a request passes one filter of the
 * starter's, not two.
 */
class RateLimitReactiveWebConfigurationTests {

	private final ReactiveWebApplicationContextRunner contextRunner = new ReactiveWebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class));

	@Test
	void runWithRouteRulesShouldHaveOnlyTheRouteFilter() {
		this.contextRunner
			.withPropertyValues("rate-limit.policies.per-ip.capacity=10", "rate-limit.policies.per-ip.refill=10/1s",
					"rate-limit.routes[0].pattern=/api/**", "rate-limit.routes[0].policies=per-ip")
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(RateLimitWebFilter.class);
				assertThat(context).doesNotHaveBean(ServerWebExchangeContextFilter.class);
				assertThat(context.getBeansOfType(WebFilter.class)).hasSize(1);
				assertThat(context).getBean(RequestBinding.class).isInstanceOf(ReactiveRequestBinding.class);
			});
	}

	@Test
	void runWithoutRouteRulesShouldPutTheExchangeInTheContextWithSpringsFilter() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasNotFailed().doesNotHaveBean(RateLimitWebFilter.class);
			assertThat(context).hasSingleBean(ServerWebExchangeContextFilter.class);
			assertThat(context).getBean(RequestBinding.class).isInstanceOf(ReactiveRequestBinding.class);
		});
	}

	@Test
	void runWithTheApplicationsOwnContextFilterShouldNotAddAnother() {
		this.contextRunner.withUserConfiguration(OwnContextFilter.class).run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(ServerWebExchangeContextFilter.class);
			assertThat(context).getBean(ServerWebExchangeContextFilter.class)
				.isSameAs(context.getBean(OwnContextFilter.class).filter);
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnContextFilter {

		final ServerWebExchangeContextFilter filter = new ServerWebExchangeContextFilter();

		@Bean
		ServerWebExchangeContextFilter ownContextFilter() {
			return this.filter;
		}

	}

}
