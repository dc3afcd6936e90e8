package dev.ratelimit.client;

import java.net.URI;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.http.HttpMethod;
import org.springframework.web.client.RestClient;

import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.client.FakeProvider.Answer;
import dev.ratelimit.core.Sleeper;
import dev.ratelimit.metrics.MicrometerClientListener;
import dev.ratelimit.support.StartupFailures;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * How provider clients are configured and bound: start-up checks naming the
 * property, binding by name and by base URL.
 */
class ProviderClientConfigurationTests {

	private final FakeProvider provider = new FakeProvider();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
		.withBean(Sleeper.class, () -> (micros) -> {
		})
		.withPropertyValues("rate-limit.policies.openai-rate.capacity=10", "rate-limit.policies.openai-rate.refill=10/1s",
				"rate-limit.policies.openai-rate.max-wait=2s", "rate-limit.concurrency.openai-parallel.permits=4");

	@AfterEach
	void stopProvider() {
		this.provider.close();
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

	@Test
	void requestsToABaseUrlFollowItsClientsRulesFromEveryBootBuilder() {
		this.provider.then(Answer.of(503), Answer.of(503));
		this.contextRunner.withPropertyValues("rate-limit.clients.openai.base-url=" + this.provider.url() + "/v1")
			.run((context) -> {
				RestClient.Builder builder = RestClient.builder();
				context.getBean(RestClientCustomizer.class).customize(builder);
				RestClient client = builder.build();
				// Another path of the same host is not the provider's: its 503 comes back at once.
				assertThat(status(client, URI.create(this.provider.url() + "/v10/x"), HttpMethod.GET)).isEqualTo(503);
				assertThat(status(client, URI.create(this.provider.url() + "/v1/x"), HttpMethod.GET)).isEqualTo(200);
				assertThat(this.provider.seen()).hasSize(3);
				// Bound twice, by name and by URL: the rules apply once (3 attempts, not 9).
				this.provider.otherwise(() -> Answer.of(503));
				RestClient.Builder both = context.getBean(ProviderClients.class).builder("openai");
				context.getBean(RestClientCustomizer.class).customize(both);
				RestClient twice = both.build();
				assertThat(status(twice, URI.create(this.provider.url() + "/v1/y"), HttpMethod.GET)).isEqualTo(503);
				assertThat(this.provider.seen()).hasSize(6);
			});
	}

	@Test
	void runWithoutBootsRestClientCustomizerShouldStillBindByName() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(RestClientCustomizer.class))
			.withPropertyValues("rate-limit.clients.openai.base-url=" + this.provider.url())
			.run((context) -> {
				assertThat(context).hasNotFailed().doesNotHaveBean(RestClientCustomizer.class);
				assertThat(context.getBean(ProviderClients.class).names()).containsExactly("openai");
			});
	}

	private static int status(RestClient client, URI uri, HttpMethod method) {
		return client.method(method).uri(uri).exchange((request, response) -> response.getStatusCode().value());
	}

}
