package dev.ratelimit.outcome;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.RateLimited;
import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.support.StartupFailures;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Counting by outcome is checked at start-up: a policy that cannot give units
 * back exactly, a {@code countWhen} that does not parse and a {@code count-on}
 * that is not a status each stop the application with a message naming the
 * place and the reason.
 */
class CountByOutcomeStartupTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class));

	private final WebApplicationContextRunner webContextRunner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class));

	@Test
	void countWhenOnAShapingPolicyFailsNamingTheMethodAndWhy() {
		this.contextRunner.withUserConfiguration(ShapingConfiguration.class)
			.withPropertyValues("rate-limit.policies.queue.algorithm=leaky-bucket-shaping",
					"rate-limit.policies.queue.capacity=5", "rate-limit.policies.queue.refill=1/1s")
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains(ShapingService.class.getName() + ".login()", "countWhen", "'queue'",
						"shaping leaky bucket"));
	}

	@Test
	void countWhenInWaitModeFailsNamingWaitMode() {
		this.contextRunner.withUserConfiguration(WaitingConfiguration.class)
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains(WaitingService.class.getName() + ".login()", "max-wait"));
	}

	@Test
	void countWhenOnAPrefetchingOrShadowPolicyFails() {
		this.contextRunner.withUserConfiguration(NamedConfiguration.class)
			.withPropertyValues("rate-limit.policies.logins.capacity=100", "rate-limit.policies.logins.refill=100/1s",
					"rate-limit.policies.logins.prefetch=10")
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription()).contains("prefetch"));
		this.contextRunner.withUserConfiguration(NamedConfiguration.class)
			.withPropertyValues("rate-limit.policies.logins.capacity=100", "rate-limit.policies.logins.refill=100/1s",
					"rate-limit.policies.logins.shadow=true")
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription()).contains("shadow"));
	}

	@Test
	void countWhenThatDoesNotParseFailsNamingTheMethod() {
		this.contextRunner.withUserConfiguration(BadExpressionConfiguration.class)
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains(BadExpressionService.class.getName() + ".login()", "countWhen expression '!#result..'"));
	}

	@Test
	void countOnWithAStatusOutOfRangeFailsNamingTheProperty() {
		this.webContextRunner
			.withPropertyValues("rate-limit.policies.logins.capacity=5", "rate-limit.policies.logins.refill=5/15m",
					"rate-limit.routes[0].pattern=/login", "rate-limit.routes[0].policies=logins",
					"rate-limit.routes[0].count-on=401,600")
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains("rate-limit.routes[0].count-on", "600"));
	}

	@Test
	void countOnWithAShapingPolicyFailsNamingTheProperty() {
		this.webContextRunner
			.withPropertyValues("rate-limit.policies.queue.algorithm=leaky-bucket-shaping",
					"rate-limit.policies.queue.capacity=5", "rate-limit.policies.queue.refill=1/1s",
					"rate-limit.routes[0].pattern=/login", "rate-limit.routes[0].policies=queue",
					"rate-limit.routes[0].count-on=401")
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains("rate-limit.routes[0].count-on", "'queue'", "shaping leaky bucket"));
	}

	@Test
	void countOnWithValidStatusesStarts() {
		this.webContextRunner
			.withPropertyValues("rate-limit.policies.logins.capacity=5", "rate-limit.policies.logins.refill=5/15m",
					"rate-limit.routes[0].pattern=/login", "rate-limit.routes[0].policies=logins",
					"rate-limit.routes[0].count-on=401,403")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Configuration(proxyBeanMethods = false)
	static class ShapingConfiguration {

		@Bean
		ShapingService shapingService() {
			return new ShapingService();
		}

	}

	static class ShapingService {

		@RateLimited(value = "queue", countWhen = "!#result")
		public boolean login() {
			return true;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class WaitingConfiguration {

		@Bean
		WaitingService waitingService() {
			return new WaitingService();
		}

	}

	static class WaitingService {

		@RateLimited(capacity = "5", refill = "5/15m", maxWait = "1s", countWhen = "!#result")
		public boolean login() {
			return true;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class NamedConfiguration {

		@Bean
		NamedService namedService() {
			return new NamedService();
		}

	}

	static class NamedService {

		@RateLimited(value = "logins", countWhen = "!#result")
		public boolean login() {
			return true;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BadExpressionConfiguration {

		@Bean
		BadExpressionService badExpressionService() {
			return new BadExpressionService();
		}

	}

	static class BadExpressionService {

		@RateLimited(capacity = "5", refill = "5/15m", countWhen = "!#result..")
		public boolean login() {
			return true;
		}

	}

}
