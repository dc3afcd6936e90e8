package dev.ratelimit.client;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.webclient.WebClientCustomizer;
import org.springframework.boot.webclient.autoconfigure.WebClientAutoConfiguration;
import org.springframework.context.ApplicationContext;
import org.springframework.web.reactive.function.client.WebClient;

import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.client.FakeProvider.Answer;
import dev.ratelimit.core.Sleeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * How the provider clients are bound to a {@code WebClient}: only with WebFlux,
 * by name, and by base URL from every builder Spring Boot builds. Backoff is
 * drawn as zero, so that no test waits.
 */
class ProviderWebClientConfigurationTests extends ProviderClientBindingScenarios<WebClient> {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, WebClientAutoConfiguration.class))
		.withBean(Sleeper.class, () -> (micros) -> {
		})
		.withBean(JitterSource.class, () -> () -> 0);

	@Override
	protected ApplicationContextRunner contextRunner() {
		return this.contextRunner;
	}

	@Override
	protected WebClient bootBuilt(ApplicationContext context) {
		return context.getBean(WebClient.Builder.class).build();
	}

	@Override
	protected WebClient boundByNameAndUrl(ApplicationContext context) {
		return context.getBean(ProviderWebClients.class).builder("openai").build();
	}

	@Override
	protected Class<?> bootCustomizer() {
		return WebClientCustomizer.class;
	}

	@Override
	protected Class<?> boundClients() {
		return ProviderWebClients.class;
	}

	@Test
	void runWithWebFluxShouldCreateProviderWebClientsBoundByName() {
		this.contextRunner.withPropertyValues("rate-limit.clients.openai.base-url=" + this.provider.url())
			.run((context) -> {
				assertThat(context).hasSingleBean(ProviderWebClients.class).hasSingleBean(ProviderClients.class);
				ProviderWebClients clients = context.getBean(ProviderWebClients.class);
				assertThat(clients.filter("openai").settings().name()).isEqualTo("openai");
				assertThatIllegalArgumentException().isThrownBy(() -> clients.filter("anthropic"))
					.withMessageContaining("'anthropic'")
					.withMessageContaining("[openai]");
				this.provider.then(Answer.of(503));
				// Boot's builder, with the provider's base URL and rules.
				assertThat(status(clients.builder("openai").build(), "/v1/x")).isEqualTo(200);
				assertThat(this.provider.seen()).hasSize(2);
			});
	}

	@Test
	void runWithoutWebFluxShouldNotCreateProviderWebClients() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(WebClient.class))
			.withPropertyValues("rate-limit.clients.openai.base-url=" + this.provider.url())
			.run((context) -> {
				assertThat(context).hasNotFailed().doesNotHaveBean(ProviderWebClients.class);
				assertThat(context.getBean(ProviderClients.class).names()).containsExactly("openai");
			});
	}

	@Override
	protected int status(WebClient client, String uri) {
		return client.get()
			.uri(uri)
			.exchangeToMono((response) -> response.releaseBody().thenReturn(response.statusCode().value()))
			.block(Duration.ofSeconds(10));
	}

}
