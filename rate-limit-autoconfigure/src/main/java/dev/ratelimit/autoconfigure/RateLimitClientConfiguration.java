package dev.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.webclient.WebClientCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;

import dev.ratelimit.Limits;
import dev.ratelimit.client.ClientListener;
import dev.ratelimit.client.JitterSource;
import dev.ratelimit.client.LocalPauseStore;
import dev.ratelimit.client.PauseStore;
import dev.ratelimit.client.ProviderClient;
import dev.ratelimit.client.ProviderClients;
import dev.ratelimit.client.ProviderWebClients;
import dev.ratelimit.core.Sleeper;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.metrics.MicrometerClientListener;

/**
 * The provider clients of {@code rate-limit.clients.*}, when the application
 * configures one and Spring's {@link RestClient} is on the classpath: a
 * {@link ProviderClients} bean, a {@link RestClientCustomizer} that applies a
 * provider's rules to requests to its base URL from every builder Spring Boot
 * builds, and their metrics; with WebFlux, the same providers as
 * {@code WebClient} filters. The Redis backend's pause store, shared by every
 * instance, is defined before the local one when it applies.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(RestClient.class)
@ConditionalOnConfigured("rate-limit.clients")
class RateLimitClientConfiguration {

	@Bean
	@ConditionalOnMissingBean
	PauseStore rateLimitPauseStore(TimeSource timeSource) {
		return new LocalPauseStore(timeSource);
	}

	@Bean
	@ConditionalOnMissingBean
	ProviderClients rateLimitProviderClients(RateLimitProperties properties, Limits limits, PauseStore pauses,
			TimeSource timeSource, ObjectProvider<Sleeper> sleeper, ObjectProvider<JitterSource> jitter,
			ObjectProvider<ClientListener> listeners, ObjectProvider<RestClient.Builder> builders) {
		// The names and values were checked, with their properties, when the properties were bound.
		ClientListener listener = ClientListener.of(listeners.orderedStream().toList());
		// Null checks and a loop rather than lambdas: each lambda is a class spun at start-up.
		Sleeper configuredSleeper = sleeper.getIfAvailable();
		JitterSource configuredJitter = jitter.getIfAvailable();
		List<ProviderClient> clients = new ArrayList<>();
		for (Map.Entry<String, RateLimitProperties.Client> client : properties.getClients().entrySet()) {
			clients.add(new ProviderClient(ClientPropertiesBinder.bind(client.getKey(), client.getValue()), limits,
					pauses, timeSource, (configuredSleeper != null) ? configuredSleeper : Sleeper.system(),
					(configuredJitter != null) ? configuredJitter : JitterSource.random(), listener));
		}
		return new ProviderClients(clients, () -> builders.getIfAvailable(RestClient::builder));
	}

	/**
	 * Applies a provider's rules to the requests to its base URL of every
	 * builder Spring Boot builds.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(RestClientCustomizer.class)
	static class ByUrl {

		@Bean
		RestClientCustomizer rateLimitProviderClientsCustomizer(ObjectProvider<ProviderClients> clients) {
			return (builder) -> {
				ProviderClients providers = clients.getIfAvailable();
				if (providers != null && providers.all().stream().anyMatch((c) -> c.settings().baseUrl() != null)) {
					builder.requestInterceptor(providers.byUrl());
				}
			};
		}

	}

	/**
	 * The same providers as {@code WebClient} filters, when WebFlux is on the
	 * classpath: a {@link ProviderWebClients} bean, and a
	 * {@link WebClientCustomizer} that applies a provider's rules to requests to
	 * its base URL from every builder Spring Boot builds.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(WebClient.class)
	static class Reactive {

		@Bean
		@ConditionalOnMissingBean
		ProviderWebClients rateLimitProviderWebClients(ProviderClients clients,
				ObjectProvider<WebClient.Builder> builders) {
			return new ProviderWebClients(clients, () -> builders.getIfAvailable(WebClient::builder));
		}

		@Configuration(proxyBeanMethods = false)
		@ConditionalOnClass(WebClientCustomizer.class)
		static class ByUrl {

			@Bean
			WebClientCustomizer rateLimitProviderWebClientsCustomizer(ObjectProvider<ProviderWebClients> clients) {
				return (builder) -> {
					ProviderWebClients providers = clients.getIfAvailable();
					if (providers != null && providers.hasBaseUrls()) {
						builder.filter(providers.byUrl());
					}
				};
			}

		}

	}

	/**
	 * Counters and timers of attempts, retries, waits and pauses, and a gauge of
	 * the pauses in force.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterRegistry.class)
	static class Metrics {

		private final MeterRegistryLookup registryLookup;

		Metrics(ObjectProvider<MeterRegistry> registry) {
			this.registryLookup = new MeterRegistryLookup(registry);
		}

		@Bean
		@ConditionalOnMissingBean
		MicrometerClientListener rateLimitClientMetricsListener() {
			return new MicrometerClientListener(this.registryLookup);
		}

		@Bean
		SmartInitializingSingleton rateLimitClientGauges(ObjectProvider<MeterRegistry> registry,
				ObjectProvider<ProviderClients> clients) {
			return () -> {
				this.registryLookup.settle();
				MeterRegistry meters = registry.getIfUnique();
				ProviderClients providers = clients.getIfAvailable();
				if (meters == null || providers == null) {
					return;
				}
				for (ProviderClient client : providers.all()) {
					Gauge.builder("rate.limit.client.paused", client, (c) -> c.isPaused() ? 1 : 0)
						.description("Whether a pause the provider asked for is in force, as this instance last saw")
						.tag("client", client.settings().name())
						.register(meters);
				}
			};
		}

	}

}
