package dev.ratelimit.autoconfigure;

import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.metrics.ObservationLimitListener;
import dev.ratelimit.web.reactive.RequestObservations;

/**
 * Decisions in traces, when the application has an {@link ObservationRegistry}
 * (Spring Boot's actuator makes one) and {@code rate-limit.observations.enabled}
 * is not false. The registry is looked up on first use, like the meter
 * registry: the listener exists before it does, and asking for it must not
 * create it (and the tracer and meters it brings) ahead of its time.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(ObservationRegistry.class)
@ConditionalOnBean(ObservationRegistry.class)
@ConditionalOnBooleanProperty(name = "rate-limit.observations.enabled", matchIfMissing = true)
class RateLimitObservationConfiguration {

	private final BeanLookup<ObservationRegistry> registryLookup;

	RateLimitObservationConfiguration(ObjectProvider<ObservationRegistry> registry) {
		this.registryLookup = new BeanLookup<>(registry);
	}

	@Bean
	@ConditionalOnMissingBean
	ObservationLimitListener rateLimitObservationListener(RateLimitProperties properties) {
		return new ObservationLimitListener(this.registryLookup, properties.getObservations().isIncludeKey());
	}

	/** Settles the look-up once every singleton, the registry among them, exists. */
	@Bean
	SmartInitializingSingleton rateLimitObservationRegistrySettled() {
		return this.registryLookup::settle;
	}

	/**
	 * WebFlux keeps a request's observation in Reactor's context: the route
	 * limits put it in scope while they decide, for the listener to find.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
	@ConditionalOnClass(name = "org.springframework.web.server.ServerWebExchange")
	static class Reactive {

		@Bean
		@ConditionalOnMissingBean
		RequestObservations rateLimitRequestObservations() {
			return new RequestObservations();
		}

	}

}
