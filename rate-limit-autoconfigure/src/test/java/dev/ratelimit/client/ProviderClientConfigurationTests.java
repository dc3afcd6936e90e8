package dev.ratelimit.client;

import java.net.URI;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.web.client.RestClient;

import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.core.Sleeper;
import dev.ratelimit.metrics.MicrometerClientListener;
import dev.ratelimit.support.StartupFailures;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * How provider clients are configured and bound to a {@code RestClient}:
 * start-up checks naming the property, binding by name and by base URL.
 */
class ProviderClientConfigurationTests extends ProviderClientBindingScenarios<RestClient> {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
		.withBean(Sleeper.class, () -> (micros) -> {
		})
		.withPropertyValues("rate-limit.policies.openai-rate.capacity=10", "rate-limit.policies.openai-rate.refill=10/1s",
				"rate-limit.policies.openai-rate.max-wait=2s", "rate-limit.concurrency.openai-parallel.permits=4");

	@Override
	protected ApplicationContextRunner contextRunner() {
		return this.contextRunner;
	}

	@Override
	protected RestClient bootBuilt(ApplicationContext context) {
		RestClient.Builder builder = RestClient.builder();
		context.getBean(RestClientCustomizer.class).customize(builder);
		return builder.build();
	}

	@Override
	protected RestClient boundByNameAndUrl(ApplicationContext context) {
		RestClient.Builder both = context.getBean(ProviderClients.class).builder("openai");
		context.getBean(RestClientCustomizer.class).customize(both);
		return both.build();
	}

	@Override
	protected int status(RestClient client, String uri) {
		return client.get().uri(URI.create(uri)).exchange((request, response) -> response.getStatusCode().value());
	}

	@Override
	protected Class<?> bootCustomizer() {
		return RestClientCustomizer.class;
	}

	@Override
	protected Class<?> boundClients() {
		return ProviderClients.class;
	}

	@Test
	void runWithoutClientsShouldCreateNoClientBeans() {
		this.contextRunner.run((context) -> assertThat(context).hasNotFailed()
			.doesNotHaveBean(ProviderClients.class)
			.doesNotHaveBean(PauseStore.class)
			.doesNotHaveBean(RestClientCustomizer.class)
			.doesNotHaveBean(MicrometerClientListener.class));
	}

	@Test
	void runWithAClientShouldCreateTheClientBeans() {
		this.contextRunner.withPropertyValues("rate-limit.clients.openai.rate-limit=openai-rate").run((context) -> {
			assertThat(context).hasSingleBean(ProviderClients.class)
				.hasSingleBean(LocalPauseStore.class)
				.hasSingleBean(RestClientCustomizer.class)
				.hasSingleBean(MicrometerClientListener.class);
			assertThat(context.getBean(ProviderClients.class).names()).containsExactly("openai");
		});
	}

	@Test
	void runWithAnUnknownPolicyShouldFailNamingTheProperty() {
		this.contextRunner.withPropertyValues("rate-limit.clients.openai.rate-limit=openai-rte").run((context) -> {
			FailureAnalysis analysis = StartupFailures.analyze(context);
			assertThat(analysis.getDescription()).contains("rate-limit.clients.openai.rate-limit", "openai-rte",
					"no rate-limit policy of that name", "openai-rate");
			assertThat(analysis.getAction()).contains("rate-limit.clients.openai.rate-limit");
		});
	}

	@Test
	void runWithAPolicyThatDoesNotWaitShouldFailSayingHowToFixIt() {
		this.contextRunner
			.withPropertyValues("rate-limit.policies.no-wait.capacity=1", "rate-limit.policies.no-wait.refill=1/1s",
					"rate-limit.clients.openai.rate-limit=no-wait")
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains("rate-limit.clients.openai.rate-limit", "rate-limit.policies.no-wait.max-wait"));
	}

	@Test
	void runWithAnUnknownCapAndBadNumbersShouldReportEveryProblemAtOnce() {
		this.contextRunner
			.withPropertyValues("rate-limit.clients.openai.concurrency=parallel",
					"rate-limit.clients.openai.max-attempts=0", "rate-limit.clients.openai.deadline=0s",
					"rate-limit.clients.openai.backoff=2s", "rate-limit.clients.openai.max-backoff=1s",
					"rate-limit.clients.openai.pause-jitter=-1s", "rate-limit.clients.openai.retry-methods=GET,NOT A METHOD",
					"rate-limit.clients.openai.base-url=ftp://example.com")
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription()).contains(
					"rate-limit.clients.openai.concurrency", "openai-parallel", "rate-limit.clients.openai.max-attempts",
					"rate-limit.clients.openai.deadline", "rate-limit.clients.openai.max-backoff",
					"rate-limit.clients.openai.pause-jitter", "rate-limit.clients.openai.retry-methods",
					"rate-limit.clients.openai.base-url"));
	}

	@Test
	void aClientIsBoundByNameAndAnUnknownNameIsRefused() {
		this.contextRunner
			.withPropertyValues("rate-limit.clients.openai.rate-limit=openai-rate",
					"rate-limit.clients.openai.concurrency=openai-parallel")
			.run((context) -> {
				ProviderClients clients = context.getBean(ProviderClients.class);
				assertThat(clients.names()).containsExactly("openai");
				assertThatIllegalArgumentException().isThrownBy(() -> clients.builder("anthropic"))
					.withMessageContaining("'anthropic'")
					.withMessageContaining("[openai]");
			});
	}

}
