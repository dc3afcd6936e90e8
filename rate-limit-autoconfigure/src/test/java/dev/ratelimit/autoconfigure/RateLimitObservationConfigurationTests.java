package dev.ratelimit.autoconfigure;

import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.core.LimitListener;
import dev.ratelimit.metrics.ObservationLimitListener;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The listener that puts decisions in traces exists only where there is an
 * {@link ObservationRegistry} to record on, and can be switched off.
 */
class RateLimitObservationConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class));

	@Test
	void runWithoutAnObservationRegistryShouldNotCreateTheListener() {
		this.contextRunner.run((context) -> assertThat(context).hasNotFailed()
			.doesNotHaveBean(ObservationLimitListener.class));
	}

	@Test
	void runWithoutMicrometerObservationShouldNotCreateTheListener() {
		this.contextRunner.withUserConfiguration(Registry.class)
			.withClassLoader(new FilteredClassLoader(ObservationRegistry.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(ObservationLimitListener.class));
	}

	@Test
	void runWithAnObservationRegistryShouldCreateTheListenerAmongTheLimitListeners() {
		this.contextRunner.withUserConfiguration(Registry.class)
			.run((context) -> assertThat(context.getBeansOfType(LimitListener.class).values())
				.hasAtLeastOneElementOfType(ObservationLimitListener.class));
	}

	@Test
	void runWhenObservationsAreDisabledShouldNotCreateTheListener() {
		this.contextRunner.withUserConfiguration(Registry.class)
			.withPropertyValues("rate-limit.observations.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(ObservationLimitListener.class));
	}

	@Configuration(proxyBeanMethods = false)
	static class Registry {

		@Bean
		ObservationRegistry observationRegistry() {
			return ObservationRegistry.create();
		}

	}

}
