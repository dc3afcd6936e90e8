package dev.ratelimit.sample;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Service;
import org.springframework.web.client.RestClient;

import dev.ratelimit.client.ProviderClients;

/**
 * Our side of the provider: a {@link RestClient} bound to the provider client
 * {@code rate-limit.clients.provider}, which keeps to the provider's rate
 * (policy {@code provider-rate}, waiting its turn) and parallel-request cap
 * (cap {@code provider}), retries its 429s after their {@code Retry-After},
 * and shares its pauses. A real provider would set {@code base-url} in
 * configuration; the simulated one listens on a port chosen at start-up.
 */
@Service
public class ProviderApi {

	private final ObjectProvider<ProviderClients> clients;

	private final SimulatedProvider provider;

	private volatile RestClient client;

	ProviderApi(ObjectProvider<ProviderClients> clients, SimulatedProvider provider) {
		this.clients = clients;
		this.provider = provider;
	}

	/**
	 * Completes a prompt.
	 * @param request the request
	 * @return the reply with its usage
	 */
	public Reply complete(ChatRequest request) {
		return client().post()
			.uri("/complete")
			.contentType(MediaType.APPLICATION_JSON)
			.body(request)
			.retrieve()
			.body(Reply.class);
	}

	private RestClient client() {
		RestClient built = this.client;
		if (built == null) {
			// On first use: the simulated provider's port is known once it has started.
			// With the limiter off (rate-limit.enabled=false) there is no provider client: a plain RestClient.
			ProviderClients clients = this.clients.getIfAvailable();
			RestClient.Builder builder = (clients != null) ? clients.builder("provider") : RestClient.builder();
			built = builder.baseUrl(this.provider.url()).build();
			this.client = built;
		}
		return built;
	}

}
