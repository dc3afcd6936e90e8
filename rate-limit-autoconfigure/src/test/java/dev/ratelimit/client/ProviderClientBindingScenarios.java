package dev.ratelimit.client;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import dev.ratelimit.client.FakeProvider.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How the provider clients are bound to an HTTP client, written once for every
 * client: by base URL from every builder Spring Boot builds, by name, and
 * without Boot's customizer. A subclass binds them to one client through a
 * small port.
 *
 * @param <C> the client under test
 */
abstract class ProviderClientBindingScenarios<C> {

	protected final FakeProvider provider = new FakeProvider();

	/** @return the application, whose client {@code openai} a test may bind */
	protected abstract ApplicationContextRunner contextRunner();

	/**
	 * Builds a client with Spring Boot's builder, customized as Boot does.
	 * @param context the application
	 * @return the client
	 */
	protected abstract C bootBuilt(ApplicationContext context);

	/**
	 * Builds a client bound twice: by the name {@code openai} and by its base URL.
	 * @param context the application
	 * @return the client
	 */
	protected abstract C boundByNameAndUrl(ApplicationContext context);

	/**
	 * GETs a URI with a client.
	 * @param client the client
	 * @param uri the whole URI
	 * @return the status the client handed back
	 */
	protected abstract int status(C client, String uri);

	/** @return Boot's customizer of the client's builders */
	protected abstract Class<?> bootCustomizer();

	/** @return the bean that binds provider clients to the client under test */
	protected abstract Class<?> boundClients();

	@AfterEach
	void stopProvider() {
		this.provider.close();
	}

	@Test
	void requestsToABaseUrlFollowItsClientsRulesFromEveryBootBuilder() {
		this.provider.then(Answer.of(503), Answer.of(503));
		contextRunner().withPropertyValues("rate-limit.clients.openai.base-url=" + this.provider.url() + "/v1")
			.run((context) -> {
				C client = bootBuilt(context);
				// Another path of the same host is not the provider's: its 503 comes back at once.
				assertThat(status(client, this.provider.url() + "/v10/x")).isEqualTo(503);
				assertThat(status(client, this.provider.url() + "/v1/x")).isEqualTo(200);
				assertThat(this.provider.seen()).hasSize(3);
				// Bound twice, by name and by URL: the rules apply once (3 attempts, not 9).
				this.provider.otherwise(() -> Answer.of(503));
				C twice = boundByNameAndUrl(context);
				assertThat(status(twice, this.provider.url() + "/v1/y")).isEqualTo(503);
				assertThat(this.provider.seen()).hasSize(6);
			});
	}

	@Test
	void runWithoutBootsCustomizerShouldStillBindByName() {
		contextRunner().withClassLoader(new FilteredClassLoader(bootCustomizer()))
			.withPropertyValues("rate-limit.clients.openai.base-url=" + this.provider.url())
			.run((context) -> {
				assertThat(context).hasNotFailed().doesNotHaveBean(bootCustomizer()).hasSingleBean(boundClients());
				assertThat(context.getBeansOfType(bootCustomizer())).isEmpty();
				assertThat(context.getBean(ProviderClients.class).names()).containsExactly("openai");
			});
	}

}
