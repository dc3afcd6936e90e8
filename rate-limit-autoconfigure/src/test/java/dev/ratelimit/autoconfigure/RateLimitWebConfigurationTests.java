package dev.ratelimit.autoconfigure;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.web.ProblemResponses;
import dev.ratelimit.web.RateLimitExceptionResolver;
import dev.ratelimit.web.RejectionHandler;
import dev.ratelimit.web.Rejections;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The answer to refusals in a servlet application: one {@link RejectionHandler},
 * the default unless the application defines its own, and an exception
 * resolver that the application can turn off.
 */
class RateLimitWebConfigurationTests {

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
	void runWithTheResolverDisabledShouldKeepTheFilterAndTheHandler() {
		this.contextRunner.withPropertyValues("rate-limit.web.exception-resolver.enabled=false").run((context) -> {
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
