package dev.ratelimit.web;

import java.net.InetSocketAddress;
import java.util.List;

import org.springframework.http.server.reactive.ServerHttpRequest;

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

	private String clientIp;

	private boolean clientIpResolved;

	ReactiveKeyRequest(ServerHttpRequest request, ClientIpResolver ipResolver) {
		this.request = request;
		this.ipResolver = ipResolver;
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
		return null;
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

}
