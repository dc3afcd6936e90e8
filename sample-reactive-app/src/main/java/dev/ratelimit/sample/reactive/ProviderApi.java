package dev.ratelimit.sample.reactive;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Service;
import org.springframework.web.reactive.function.client.WebClient;

import dev.ratelimit.client.ProviderWebClients;

/**
 * Our side of the provider: a {@link WebClient} bound to the provider client
 * {@code rate-limit.clients.provider}, which keeps to the provider's rate
 * (policy {@code provider-rate}, waiting its turn) and parallel-request cap
 * (cap {@code provider}), retries its 429s after their {@code Retry-After},
 * and never blocks an event loop while it waits. A real provider would set
 * {@code base-url} in configuration; the simulated one listens on a port
 * chosen at start-up.
 */
@Service
public class ProviderApi {

	private final ObjectProvider<ProviderWebClients> clients;

	private final SimulatedProvider provider;

	private volatile WebClient client;

	ProviderApi(ObjectProvider<ProviderWebClients> clients, SimulatedProvider provider) {
		this.clients = clients;
		this.provider = provider;
	}

	/**
	 * Completes a prompt.
	 * @param request the request
	 * @return the reply with its usage
	 */
	public Mono<Reply> complete(ChatRequest request) {
		return client().post()
			.uri("/complete")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(request)
			.retrieve()
			.bodyToMono(Reply.class);
	}

	/**
	 * Streams the answer to a prompt, a token at a time.
	 * @param request the request
	 * @return the tokens
	 */
	public Flux<String> stream(ChatRequest request) {
		return client().post()
			.uri("/stream")
			.contentType(MediaType.APPLICATION_JSON)
			.accept(MediaType.TEXT_EVENT_STREAM)
			.bodyValue(request)
			.retrieve()
			.bodyToFlux(String.class);
	}

	private WebClient client() {
		WebClient built = this.client;
		if (built == null) {
			// On first use: the simulated provider's port is known once it has started.
			// With the limiter off (rate-limit.enabled=false) there is no provider client: a plain WebClient.
			ProviderWebClients clients = this.clients.getIfAvailable();
			WebClient.Builder builder = (clients != null) ? clients.builder("provider") : WebClient.builder();
			built = builder.baseUrl(this.provider.url().toString()).build();
			this.client = built;
		}
		return built;
	}

}
