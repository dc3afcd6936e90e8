package dev.ratelimit.autoconfigure;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.key.RequestBinding;
import dev.ratelimit.web.servlet.ProblemResponses;
import dev.ratelimit.web.servlet.RateLimitFilter;
import dev.ratelimit.web.servlet.RateLimitExceptionResolver;
import dev.ratelimit.web.servlet.RejectionHandler;
import dev.ratelimit.web.servlet.Rejections;
import dev.ratelimit.web.servlet.RouteRuleVerifier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The answer to refusals in a servlet application: one {@link RejectionHandler},
 * the default unless the application defines its own, and an exception
 * resolver that the application can turn off; the route filter only with route
 * rules.
 */
class RateLimitWebConfigurationTests {

	private static final String[] ROUTE = { "rate-limit.policies.per-ip.capacity=10",
			"rate-limit.policies.per-ip.refill=10/1s", "rate-limit.routes[0].pattern=/api/**",
			"rate-limit.routes[0].policies=per-ip" };

	private final WebApplicationContextRunner contextRunner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class));

	@Test
	void runWithDefaultsShouldAnswerWithProblemResponses() {
		this.contextRunner.run((context) -> {
			assertThat(context).getBean(RejectionHandler.class).isInstanceOf(ProblemResponses.class);
			assertThat(context).hasSingleBean(Rejections.class).hasSingleBean(RateLimitExceptionResolver.class);
		});
	}

	@Test
	void runWithAnApplicationHandlerShouldBackOff() {
		this.contextRunner.withUserConfiguration(OwnHandler.class).run((context) -> {
			assertThat(context).hasSingleBean(RejectionHandler.class);
			assertThat(context).getBean(RejectionHandler.class).isSameAs(context.getBean(OwnHandler.class).handler);
		});
	}

	@Test
	void runWithoutRouteRulesShouldCreateNoFilter() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasNotFailed().doesNotHaveBean("rateLimitFilterRegistration");
			assertThat(context).doesNotHaveBean(RateLimitFilter.class).doesNotHaveBean(RouteRuleVerifier.class);
			// Annotated methods still answer refusals in Spring MVC.
			assertThat(context).hasSingleBean(RateLimitExceptionResolver.class).hasSingleBean(RequestBinding.class);
		});
	}

	@Test
	void runWithRouteRulesShouldRegisterTheFilterAndCheckTheRules() {
		this.contextRunner.withPropertyValues(ROUTE).run((context) -> {
			assertThat(context).hasSingleBean(RouteRuleVerifier.class);
			assertThat(context).getBean("rateLimitFilterRegistration", FilterRegistrationBean.class)
				.satisfies((registration) -> assertThat(registration.getFilter()).isInstanceOf(RateLimitFilter.class));
		});
	}

	@Test
	void runWithTheResolverDisabledShouldKeepTheFilterAndTheHandler() {
		this.contextRunner.withPropertyValues(ROUTE)
			.withPropertyValues("rate-limit.web.exception-resolver.enabled=false")
			.run((context) -> {
				assertThat(context).doesNotHaveBean(RateLimitExceptionResolver.class);
				assertThat(context).hasSingleBean(RejectionHandler.class).hasSingleBean(Rejections.class);
				assertThat(context).hasBean("rateLimitFilterRegistration");
				assertThat(context).getBean("rateLimitFilterRegistration", FilterRegistrationBean.class).isNotNull();
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnHandler {

		final RejectionHandler handler = (request, response, rejection) -> response.sendError(rejection.status());

		@Bean
		RejectionHandler ownRejectionHandler() {
			return this.handler;
		}

	}

}
