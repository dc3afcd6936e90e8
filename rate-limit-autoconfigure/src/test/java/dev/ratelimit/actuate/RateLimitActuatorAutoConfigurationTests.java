package dev.ratelimit.actuate;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.security.web.DefaultSecurityFilterChain;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.util.matcher.AnyRequestMatcher;

import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When the actuator auto-configuration registers the {@code ratelimits}
 * endpoint, its usage registry and the {@code rateLimit} health contributor,
 * and when it backs off.
 */
@ExtendWith(OutputCaptureExtension.class)
class RateLimitActuatorAutoConfigurationTests {

	private final WebApplicationContextRunner contextRunner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class,
				RateLimitActuatorAutoConfiguration.class))
		.withPropertyValues("rate-limit.policies.api.capacity=10", "rate-limit.policies.api.refill=10/1s",
				"rate-limit.routes[0].pattern=/api/**", "rate-limit.routes[0].policies=api");

	@Test
	void exposedEndpointIsRegisteredWithItsUsageRegistryAndTheHealthIndicator() {
		this.contextRunner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
			.run((context) -> {
				assertThat(context).hasSingleBean(RateLimitEndpoint.class)
					.hasSingleBean(PolicyUsages.class)
					.hasSingleBean(PolicyUsageScanner.class)
					.hasBean("rateLimitHealthIndicator");
				assertThat(context.getBean(PolicyUsages.class).routesOf("api")).singleElement()
					.satisfies((route) -> assertThat(route.pattern()).isEqualTo("/api/**"));
			});
	}

	@Test
	void endpointIsReadOnlyUnlessWritesAreAllowed(CapturedOutput output) {
		this.contextRunner.withPropertyValues("management.endpoints.web.exposure.include=*").run((context) -> {
			assertThat(context.getBean(EndpointWriteAccessCheck.class).writesOpenToAnyone()).isFalse();
			assertThat(output).doesNotContain("reset its own limits");
		});
	}

	@Test
	void writesExposedWithoutSpringSecurityAreWarnedAbout(CapturedOutput output) {
		this.contextRunner
			.withPropertyValues("management.endpoints.web.exposure.include=*",
					"management.endpoint.ratelimits.access=UNRESTRICTED")
			.run((context) -> {
				assertThat(context.getBean(EndpointWriteAccessCheck.class).writesOpenToAnyone()).isTrue();
				assertThat(output).contains("any client that reaches the management port can reset its own limits");
			});
	}

	@Test
	void writesBehindASecurityFilterChainAreNotWarnedAbout(CapturedOutput output) {
		this.contextRunner
			.withPropertyValues("management.endpoints.web.exposure.include=*",
					"management.endpoint.ratelimits.access=UNRESTRICTED")
			.withBean(SecurityFilterChain.class, () -> new DefaultSecurityFilterChain(AnyRequestMatcher.INSTANCE))
			.run((context) -> {
				assertThat(context.getBean(EndpointWriteAccessCheck.class).writesOpenToAnyone()).isFalse();
				assertThat(output).doesNotContain("reset its own limits");
			});
	}

	@Test
	void endpointThatIsNotExposedIsNotRegisteredButHealthStillIs() {
		this.contextRunner.run((context) -> assertThat(context).doesNotHaveBean(RateLimitEndpoint.class)
			.doesNotHaveBean(PolicyUsages.class)
			.hasSingleBean(RateLimitHealthIndicator.class));
	}

	@Test
	void backsOffWithoutActuatorOnTheClasspath() {
		this.contextRunner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
			.withClassLoader(
					new FilteredClassLoader("org.springframework.boot.actuate", "org.springframework.boot.health"))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(RateLimitEndpoint.class)
				.doesNotHaveBean(PolicyUsages.class)
				.doesNotHaveBean(RateLimitHealthIndicator.class));
	}

	@Test
	void healthIndicatorBacksOffWithoutTheHealthModule() {
		this.contextRunner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
			.withClassLoader(new FilteredClassLoader("org.springframework.boot.health"))
			.run((context) -> assertThat(context).hasSingleBean(RateLimitEndpoint.class)
				.doesNotHaveBean(RateLimitHealthIndicator.class));
	}

	@Test
	void healthIndicatorCanBeDisabled() {
		this.contextRunner.withPropertyValues("management.health.rate-limit.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RateLimitHealthIndicator.class));
	}

	@Test
	void healthOfTheMemoryBackendNeedsNoRedisOnTheClasspath() {
		this.contextRunner.withClassLoader(new FilteredClassLoader("org.springframework.data.redis"))
			.run((context) -> assertThat(context.getBean(RateLimitHealthIndicator.class).health().getStatus())
				.isEqualTo(Status.UP));
	}

	@Test
	void backsOffWhenRateLimitingIsDisabled() {
		this.contextRunner
			.withPropertyValues("rate-limit.enabled=false", "management.endpoints.web.exposure.include=ratelimits")
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(RateLimitEndpoint.class)
				.doesNotHaveBean(RateLimitHealthIndicator.class));
	}

	@Test
	void userDefinedHealthIndicatorIsKept() {
		this.contextRunner.withBean("rateLimitHealthIndicator", String.class, () -> "mine")
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitHealthIndicator.class)
				.getBean("rateLimitHealthIndicator")
				.isEqualTo("mine"));
	}

}
