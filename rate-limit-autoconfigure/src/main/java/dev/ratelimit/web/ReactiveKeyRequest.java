package dev.ratelimit.web;

import java.net.InetSocketAddress;
import java.security.Principal;
import java.util.List;

import reactor.core.publisher.Mono;

import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.util.ClassUtils;
import org.springframework.web.server.ServerWebExchange;

import dev.ratelimit.web.ClientIpResolver;
import dev.ratelimit.key.KeyRequest;

/**
 * {@link KeyRequest} over a WebFlux request: the headers and the client
 * address with the same trusted-proxy rules as a servlet request, and the
 * principal, which WebFlux keeps in the reactive pipeline rather than on the
 * request: it is resolved from the exchange before the request's decisions
 * ({@link #principal(ServerWebExchange)}). With Spring Security, an anonymous
 * authentication is no principal and roles are its authorities, as on a
 * servlet request (see {@link SecurityPrincipals}); another principal has a
 * name and no roles.
 */
final class ReactiveKeyRequest implements KeyRequest {

	private final ServerHttpRequest request;

	private final ClientIpResolver ipResolver;

	private static final boolean SECURITY = ClassUtils.isPresent("org.springframework.security.core.Authentication",
			ReactiveKeyRequest.class.getClassLoader());

	/** The principal of an anonymous request, as {@link #principal(ServerWebExchange)} gives it. */
	static final Principal ANONYMOUS = () -> "";

	private final Principal principal;

	private String clientIp;

	private boolean clientIpResolved;

	/**
	 * Creates a key request.
	 * @param request the request
	 * @param ipResolver resolves its client address
	 * @param principal its principal, from {@link #principal(ServerWebExchange)}, or {@code null} for none
	 */
	ReactiveKeyRequest(ServerHttpRequest request, ClientIpResolver ipResolver, Principal principal) {
		this.request = request;
		this.ipResolver = ipResolver;
		this.principal = (principal == ANONYMOUS) ? null : principal;
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
		return this.principal != null && SECURITY && SecurityPrincipals.hasRole(this.principal, role);
	}

	@Override
	public String principalName() {
		return (this.principal != null) ? this.principal.getName() : null;
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
	 * Returns an exchange's principal when it is known without subscribing:
	 * {@link #ANONYMOUS} when nothing in the pipeline provides one (an
	 * application without security, whose exchange answers
	 * {@code Mono.empty()}).
	 * @param exchange the exchange
	 * @return {@link #ANONYMOUS}, or {@code null} when it must be resolved
	 */
	static Principal principalIfKnown(ServerWebExchange exchange) {
		return (exchange.getPrincipal() == Mono.<Principal>empty()) ? ANONYMOUS : null;
	}

	/**
	 * Resolves an exchange's principal, as WebFlux (and Spring Security) keep
	 * it in the reactive pipeline.
	 * @param exchange the exchange
	 * @return the principal, or {@link #ANONYMOUS} for an anonymous request (never empty)
	 */
	static Mono<Principal> principal(ServerWebExchange exchange) {
		Principal known = principalIfKnown(exchange);
		if (known != null) {
			return Mono.just(known);
		}
		return exchange.getPrincipal()
			.filter((principal) -> !(SECURITY && SecurityPrincipals.isAnonymous(principal)))
			.defaultIfEmpty(ANONYMOUS);
	}

}
