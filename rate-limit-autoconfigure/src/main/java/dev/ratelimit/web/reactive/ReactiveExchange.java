package dev.ratelimit.web.reactive;

import java.net.InetSocketAddress;
import java.security.Principal;
import java.util.List;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.util.ClassUtils;
import org.springframework.web.server.ServerWebExchange;

import dev.ratelimit.web.ClientIpResolver;
import dev.ratelimit.web.WebExchange;

/**
 * A WebFlux exchange as the shared web contract sees it ({@link WebExchange}):
 * the headers and the client address with the same trusted-proxy rules as a
 * servlet request, and the principal, which WebFlux keeps in the reactive
 * pipeline rather than on the request: it is resolved from the exchange before
 * the request's decisions ({@link #principal(ServerWebExchange)}). With Spring
 * Security, an anonymous authentication is no principal and roles are its
 * authorities, as on a servlet request (see {@link SecurityPrincipals});
 * another principal has a name and no roles.
 */
final class ReactiveExchange extends WebExchange {

	private static final boolean SECURITY = ClassUtils.isPresent("org.springframework.security.core.Authentication",
			ReactiveExchange.class.getClassLoader());

	/** The principal of an anonymous request, as {@link #principal(ServerWebExchange)} gives it. */
	static final Principal ANONYMOUS = () -> "";

	private final ServerWebExchange exchange;

	private final ServerHttpRequest request;

	private @Nullable Principal principal;

	/**
	 * Creates the exchange.
	 * @param exchange the WebFlux exchange
	 * @param ipResolver resolves the client address
	 * @param principal its principal, from {@link #principal(ServerWebExchange)}, or {@code null} for none
	 */
	ReactiveExchange(ServerWebExchange exchange, ClientIpResolver ipResolver, @Nullable Principal principal) {
		super(ipResolver, null);
		this.exchange = exchange;
		this.request = exchange.getRequest();
		this.principal = (principal == ANONYMOUS) ? null : principal;
	}

	/**
	 * Sets the principal, once resolved from the pipeline.
	 * @param principal the principal, from {@link #principal(ServerWebExchange)}
	 * @return this exchange
	 */
	ReactiveExchange principal(Principal principal) {
		this.principal = (principal == ANONYMOUS) ? null : principal;
		return this;
	}

	/** @return the WebFlux exchange */
	ServerWebExchange exchange() {
		return this.exchange;
	}

	@Override
	public String method() {
		return this.request.getMethod().name();
	}

	@Override
	public @Nullable String plainPath() {
		String raw = path().value();
		return isPlain(raw) ? raw : null;
	}

	@Override
	public PathContainer path() {
		return this.request.getPath().pathWithinApplication();
	}

	@Override
	protected @Nullable String firstHeader(String name) {
		return this.request.getHeaders().getFirst(name);
	}

	@Override
	protected List<String> headerValues(String name) {
		List<String> values = this.request.getHeaders().get(name);
		return (values != null) ? values : List.of();
	}

	@Override
	protected @Nullable String remoteAddress() {
		InetSocketAddress remote = this.request.getRemoteAddress();
		// The literal address, never a host name: resolving one would block on DNS.
		return (remote != null && remote.getAddress() != null) ? remote.getAddress().getHostAddress() : null;
	}

	@Override
	public boolean isUserInRole(String role) {
		return this.principal != null && SECURITY && SecurityPrincipals.hasRole(this.principal, role);
	}

	@Override
	public @Nullable String principalName() {
		return (this.principal != null) ? this.principal.getName() : null;
	}

	@Override
	public Object nativeRequest() {
		return this.request;
	}

	@Override
	protected @Nullable Object attribute(String name) {
		return this.exchange.getAttributes().get(name);
	}

	@Override
	protected void setAttribute(String name, Object value) {
		this.exchange.getAttributes().put(name, value);
	}

	@Override
	protected void setHeader(String name, String value) {
		this.exchange.getResponse().getHeaders().set(name, value);
	}

	@Override
	protected boolean isCommitted() {
		return this.exchange.getResponse().isCommitted();
	}

	@Override
	public int status() {
		return status(this.exchange.getResponse());
	}

	/**
	 * Returns a response's status as set so far.
	 * @param response the response
	 * @return the status, or {@code -1} when none is set yet
	 */
	static int status(ServerHttpResponse response) {
		HttpStatusCode code = response.getStatusCode();
		return (code != null) ? code.value() : -1;
	}

	/**
	 * Returns an exchange's principal when it is known without subscribing:
	 * {@link #ANONYMOUS} when nothing in the pipeline provides one (an
	 * application without security, whose exchange answers
	 * {@code Mono.empty()}).
	 * @param exchange the exchange
	 * @return {@link #ANONYMOUS}, or {@code null} when it must be resolved
	 */
	static @Nullable Principal principalIfKnown(ServerWebExchange exchange) {
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
