package dev.ratelimit.autoconfigure;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.mock.env.MockEnvironment;

import dev.ratelimit.core.RateLimitConfigurationException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * An application processed ahead of time refuses to start when its rate-limit
 * properties pick other beans than it was processed with: the beans are those
 * of a context as processed, the environment the one it starts with.
 */
class ProcessedConditionsTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitAotConfiguration.class));

	@Test
	void onlyWhatSpringAotProcessesHasTheCheck() {
		this.contextRunner
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(ProcessedConditions.class));
		this.contextRunner.withPropertyValues("spring.aot.processing=true")
			.run((context) -> assertThat(context).hasSingleBean(ProcessedConditions.class));
		this.contextRunner.withPropertyValues("spring.aot.processing=true", "rate-limit.enabled=false")
			.run((context) -> assertThat(context).hasSingleBean(ProcessedConditions.class));
	}

	@Test
	void theSamePropertiesStart() {
		this.contextRunner.withPropertyValues("rate-limit.budgets.spend.amount=1.00").run((context) -> {
			ProcessedConditions check = startingWith(context, new MockEnvironment()
				.withProperty("rate-limit.backend", "memory").withProperty("rate-limit.budgets.spend.amount", "2.00"));
			assertThat(check.mismatches()).isEmpty();
			check.afterSingletonsInstantiated();
		});
	}

	@Test
	void aBackendOtherThanTheProcessedOneIsRefusedWithWhy() {
		this.contextRunner.run((context) -> {
			ProcessedConditions check = startingWith(context,
					new MockEnvironment().withProperty("rate-limit.backend", "redis"));
			assertThatExceptionOfType(RateLimitConfigurationException.class)
				.isThrownBy(check::afterSingletonsInstantiated)
				.withMessageContaining("rate-limit.backend is redis, but the application was processed with the "
						+ "memory backend");
		});
	}

	@Test
	void aLimiterProcessedOffIsNotSwitchedOnQuietly() {
		this.contextRunner.withPropertyValues("rate-limit.enabled=false").run((context) -> {
			assertThat(startingWith(context, new MockEnvironment()).mismatches())
				.containsExactly("rate-limit.enabled is true, but the limiter was processed off");
			assertThat(startingWith(context, new MockEnvironment().withProperty("rate-limit.enabled", "false"))
				.mismatches()).isEmpty();
		});
		this.contextRunner.run((context) -> assertThat(
				startingWith(context, new MockEnvironment().withProperty("rate-limit.enabled", "false")).mismatches())
			.containsExactly("rate-limit.enabled is false, but the limiter was processed on"));
	}

	@Test
	void budgetsConfiguredOnlyAtStartAreRefused() {
		this.contextRunner.run((context) -> assertThat(startingWith(context,
				new MockEnvironment().withProperty("rate-limit.budgets.spend.amount", "1.00")).mismatches())
			.containsExactly("rate-limit.budgets are configured, but the application was processed without budgets"));
	}

	@Test
	void routeRulesConfiguredOnlyAtStartAreRefused() {
		new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitAotConfiguration.class))
			.run((context) -> assertThat(startingWith(context,
					new MockEnvironment().withProperty("rate-limit.routes[0].pattern", "/api/**")).mismatches())
				.containsExactly("rate-limit.routes are configured, but the application was processed without route "
						+ "rules"));
		new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitAotConfiguration.class))
			.withPropertyValues("rate-limit.policies.per-ip.capacity=1", "rate-limit.policies.per-ip.refill=1/1s",
					"rate-limit.routes[0].pattern=/api/**", "rate-limit.routes[0].policies=per-ip")
			.run((context) -> assertThat(startingWith(context,
					new MockEnvironment().withProperty("rate-limit.routes[0].pattern", "/api/**")).mismatches())
				.isEmpty());
	}

	@Test
	void withoutAotNothingIsChecked() {
		this.contextRunner.run((context) -> new ProcessedConditions(
				new MockEnvironment().withProperty("rate-limit.backend", "redis"), context.getBeanFactory(), false)
			.afterSingletonsInstantiated());
	}

	private static ProcessedConditions startingWith(ConfigurableApplicationContext context, MockEnvironment started) {
		return new ProcessedConditions(started, context.getBeanFactory(), true);
	}

}
