package dev.ratelimit.client;

import java.io.IOException;
import java.net.URI;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.web.client.RestClient;

/**
 * The configured provider clients, by name: how application code binds a
 * {@link RestClient} to a provider.
 *
 * <pre class="code">
 * RestClient openai = providerClients.builder("openai").build();          // base-url and rules of rate-limit.clients.openai
 * RestClient other = RestClient.builder().apply(providerClients.customizer("openai")).build();
 * </pre>
 *
 * A provider with a {@code base-url} is also matched by URL: {@link #byUrl()}
 * is an interceptor that applies the rules of the provider whose base URL a
 * request's URL starts with (the longest one), and lets every other request
 * through untouched; the auto-configuration adds it to every
 * {@code RestClient.Builder} Spring Boot builds.
 */
public final class ProviderClients {

	private final Map<String, ProviderClient> clients;

	private final Supplier<RestClient.Builder> builders;

	/**
	 * Creates the clients.
	 * @param clients the clients, in configuration order
	 * @param builders makes a new builder (the application's customized one if it has one)
	 */
	public ProviderClients(Collection<ProviderClient> clients, Supplier<RestClient.Builder> builders) {
		Map<String, ProviderClient> byName = new LinkedHashMap<>();
		clients.forEach((client) -> byName.put(client.settings().name(), client));
		this.clients = byName;
		this.builders = builders;
	}

	/** @return the names of the configured providers, in configuration order */
	public Set<String> names() {
		return this.clients.keySet();
	}

	/** @return the clients, in configuration order */
	public Collection<ProviderClient> all() {
		return this.clients.values();
	}

	/**
	 * Returns a provider's client, which is the interceptor to add to a builder.
	 * @param name the provider's name
	 * @return the client
	 * @throws IllegalArgumentException if no such provider is configured
	 */
	public ProviderClient client(String name) {
		ProviderClient client = this.clients.get(name);
		if (client == null) {
			throw new IllegalArgumentException("No provider client named '" + name
					+ "' is configured under rate-limit.clients (configured: " + names() + ")");
		}
		return client;
	}

	/**
	 * Returns a new builder bound to a provider: its base URL, when configured,
	 * and its rules.
	 * @param name the provider's name
	 * @return a new builder, to customize further and build
	 * @throws IllegalArgumentException if no such provider is configured
	 */
	public RestClient.Builder builder(String name) {
		return this.builders.get().apply(customizer(name));
	}

	/**
	 * Returns what binds a builder to a provider: sets its base URL, when
	 * configured, and adds the provider's rules.
	 * @param name the provider's name
	 * @return the customization, for {@link RestClient.Builder#apply}
	 * @throws IllegalArgumentException if no such provider is configured
	 */
	public Consumer<RestClient.Builder> customizer(String name) {
		ProviderClient client = client(name);
		return (builder) -> {
			URI baseUrl = client.settings().baseUrl();
			if (baseUrl != null) {
				builder.baseUrl(baseUrl);
			}
			builder.requestInterceptor(client);
		};
	}

	/**
	 * Returns the provider whose base URL a URL starts with, the longest one.
	 * @param url a request's URL
	 * @return the provider's client, if any
	 */
	public Optional<ProviderClient> match(URI url) {
		ProviderClient best = null;
		int bestLength = -1;
		for (ProviderClient client : this.clients.values()) {
			// Only a client with a base URL matches one.
			URI baseUrl = client.settings().baseUrl();
			if (baseUrl != null && client.settings().matches(url) && baseUrl.toString().length() > bestLength) {
				best = client;
				bestLength = baseUrl.toString().length();
			}
		}
		return Optional.ofNullable(best);
	}

	/**
	 * Returns an interceptor applying the rules of the provider a request's URL
	 * belongs to, and nothing to other requests.
	 * @return the interceptor
	 */
	public ClientHttpRequestInterceptor byUrl() {
		return new ClientHttpRequestInterceptor() {

			@Override
			public ClientHttpResponse intercept(HttpRequest request, byte[] body,
					ClientHttpRequestExecution execution) throws IOException {
				Optional<ProviderClient> client = match(request.getURI());
				return client.isPresent() ? client.get().intercept(request, body, execution)
						: execution.execute(request, body);
			}

		};
	}

}
