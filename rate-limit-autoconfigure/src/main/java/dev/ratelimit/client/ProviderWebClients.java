package dev.ratelimit.client;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The configured provider clients as {@link WebClient} filters, by name: how
 * reactive application code binds a {@link WebClient} to a provider. Each
 * provider's filter follows the rules of its {@link ProviderClient}, so a
 * provider called through both a {@code RestClient} and a {@code WebClient}
 * has one rate, one cap and one pause.
 *
 * <pre class="code">
 * WebClient openai = providerWebClients.builder("openai").build();         // base-url and rules of rate-limit.clients.openai
 * WebClient other = WebClient.builder().apply(providerWebClients.customizer("openai")).build();
 * </pre>
 *
 * A provider with a {@code base-url} is also matched by URL: {@link #byUrl()}
 * is a filter that applies the rules of the provider whose base URL a
 * request's URL starts with (the longest one), and lets every other request
 * through untouched; the auto-configuration adds it to every
 * {@code WebClient.Builder} Spring Boot builds.
 */
public final class ProviderWebClients {

	private final ProviderClients clients;

	private final Map<String, ProviderExchangeFilter> filters;

	private final Supplier<WebClient.Builder> builders;

	/**
	 * Creates the filters, waiting on Reactor's parallel scheduler and taking
	 * the limits on its bounded elastic one.
	 * @param clients the provider clients, whose rules the filters follow
	 * @param builders makes a new builder (the application's customized one if it has one)
	 */
	public ProviderWebClients(ProviderClients clients, Supplier<WebClient.Builder> builders) {
		this(clients, builders, ProviderExchangeFilter::new);
	}

	/**
	 * Creates the filters.
	 * @param clients the provider clients, whose rules the filters follow
	 * @param builders makes a new builder (the application's customized one if it has one)
	 * @param filters makes the filter of a client: to choose its schedulers
	 */
	public ProviderWebClients(ProviderClients clients, Supplier<WebClient.Builder> builders,
			Function<ProviderClient, ProviderExchangeFilter> filters) {
		Map<String, ProviderExchangeFilter> byName = new LinkedHashMap<>();
		clients.all().forEach((client) -> byName.put(client.settings().name(), filters.apply(client)));
		this.clients = clients;
		this.filters = byName;
		this.builders = builders;
	}

	/**
	 * Returns a provider's filter, to add to a builder.
	 * @param name the provider's name
	 * @return the filter
	 * @throws IllegalArgumentException if no such provider is configured
	 */
	public ProviderExchangeFilter filter(String name) {
		this.clients.client(name);
		return filterOf(name);
	}

	/**
	 * Returns a new builder bound to a provider: its base URL, when configured,
	 * and its rules.
	 * @param name the provider's name
	 * @return a new builder, to customize further and build
	 * @throws IllegalArgumentException if no such provider is configured
	 */
	public WebClient.Builder builder(String name) {
		return this.builders.get().apply(customizer(name));
	}

	/**
	 * Returns what binds a builder to a provider: sets its base URL, when
	 * configured, and adds the provider's filter.
	 * @param name the provider's name
	 * @return the customization, for {@link WebClient.Builder#apply}
	 * @throws IllegalArgumentException if no such provider is configured
	 */
	public Consumer<WebClient.Builder> customizer(String name) {
		ProviderExchangeFilter filter = filter(name);
		return (builder) -> {
			URI baseUrl = filter.settings().baseUrl();
			if (baseUrl != null) {
				builder.baseUrl(baseUrl.toString());
			}
			builder.filter(filter);
		};
	}

	/**
	 * Returns whether any provider has a base URL, for {@link #byUrl()} to match.
	 * @return whether a request can be matched by URL
	 */
	public boolean hasBaseUrls() {
		return this.clients.all().stream().anyMatch((client) -> client.settings().baseUrl() != null);
	}

	/**
	 * Returns a filter applying the rules of the provider a request's URL
	 * belongs to, and nothing to other requests.
	 * @return the filter
	 */
	public ExchangeFilterFunction byUrl() {
		return (request, next) -> {
			Optional<ProviderClient> client = this.clients.match(request.url());
			return client.isPresent() ? filterOf(client.get().settings().name()).filter(request, next)
					: next.exchange(request);
		};
	}

	/** The filter of a configured provider: every provider has one. */
	private ProviderExchangeFilter filterOf(String name) {
		return Objects.requireNonNull(this.filters.get(name), "every provider has a filter");
	}

}
