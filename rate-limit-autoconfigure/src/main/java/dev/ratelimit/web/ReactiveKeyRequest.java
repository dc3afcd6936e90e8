package dev.ratelimit.web;

import java.net.InetSocketAddress;
import java.security.Principal;
import java.util.List;

import reactor.core.publisher.Mono;

import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.ServerWebExchange;

import dev.ratelimit.core.ClientIpResolver;
import dev.ratelimit.key.KeyRequest;

/**
 * {@link KeyRequest} over a WebFlux request: the headers and the client
 * address with the same trusted-proxy rules as a servlet request. The
 * principal is not known here (WebFlux keeps it in the reactive pipeline, not
 * on the request), so {@code principal} keys resolve to no key and role checks
 * answer {@code false}.
 */
final class ReactiveKeyRequest implements KeyRequest {

	private final ServerHttpRequest request;

	private final ClientIpResolver ipResolver;

	private final String principalName;

	private String clientIp;

	private boolean clientIpResolved;

	ReactiveKeyRequest(ServerHttpRequest request, ClientIpResolver ipResolver, String principalName) {
		this.request = request;
		this.ipResolver = ipResolver;
		this.principalName = principalName;
	}

	@Override
	public String header(String name) {
		String value = this.request.getHeaders().getFirst(name);
		return (value == null || value.isBlank()) ? null : value;
	}

	@Override
	public String clientIp() {
		if (!this.clientIpResolved) {
			this.clientIp = this.ipResolver.resolve(remoteAddress(), forwarded());
			this.clientIpResolved = true;
		}
		return this.clientIp;
	}

	@Override
	public byte[] clientAddress() {
		return this.ipResolver.resolveAddress(remoteAddress(), forwarded());
	}

	@Override
	public boolean isUserInRole(String role) {
		return false;
	}

	@Override
	public String principalName() {
		return this.principalName;
	}

	@Override
	public Object nativeRequest() {
		return this.request;
	}

	private String remoteAddress() {
		InetSocketAddress remote = this.request.getRemoteAddress();
		// The literal address, never a host name: resolving one would block on DNS.
		return (remote != null && remote.getAddress() != null) ? remote.getAddress().getHostAddress() : null;
	}

	private List<String> forwarded() {
		if (!this.ipResolver.readsHeader()) {
			return List.of();
		}
		List<String> values = this.request.getHeaders().get(this.ipResolver.header().headerName());
		return (values != null) ? values : List.of();
	}

	/**
	 * Resolves the name of an exchange's principal, as WebFlux (and Spring
	 * Security) keep it in the reactive pipeline.
	 * @param exchange the exchange
	 * @return the name, or an empty string for an anonymous request (never empty)
	 */
	static Mono<String> principalName(ServerWebExchange exchange) {
		return exchange.getPrincipal().map(Principal::getName).defaultIfEmpty(ANONYMOUS);
	}

	/** The principal name of an anonymous request, as {@link #principalName(ServerWebExchange)} gives it. */
	static final String ANONYMOUS = "";

	/**
	 * Returns a resolved principal name as a key request takes it.
	 * @param name what {@link #principalName(ServerWebExchange)} gave
	 * @return the name, or {@code null} for an anonymous request
	 */
	static String orNull(String name) {
		return (name == null || name.isEmpty()) ? null : name;
	}

}
