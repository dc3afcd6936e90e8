package dev.ratelimit.web.reactive;

import java.security.Principal;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.codec.multipart.Part;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.util.MultiValueMap;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebExchangeDecorator;
import org.springframework.web.server.WebSession;

import dev.ratelimit.web.reactive.BoundRequests.Bound;

/**
 * A WebFlux exchange whose asynchronous parts deliver their signals with the
 * request bound to the delivering thread ({@link BoundRequests}): its body,
 * form data, multipart data, session and principal. WebFlux calls a handler
 * method on the thread that delivered the last of its arguments; when one is
 * read from the body, that is the thread the body's end arrived on, which then
 * sees the request.
 */
final class BoundExchange extends ServerWebExchangeDecorator {

	private final Bound bound;

	private final ServerHttpRequest request;

	BoundExchange(ServerWebExchange delegate, Bound bound) {
		super(delegate);
		this.bound = bound;
		this.request = new ServerHttpRequestDecorator(delegate.getRequest()) {

			@Override
			public Flux<DataBuffer> getBody() {
				return BoundRequests.signals(bound, super.getBody());
			}

		};
	}

	@Override
	public ServerHttpRequest getRequest() {
		return this.request;
	}

	@Override
	public Mono<MultiValueMap<String, String>> getFormData() {
		return BoundRequests.signals(this.bound, super.getFormData());
	}

	@Override
	public Mono<MultiValueMap<String, Part>> getMultipartData() {
		return BoundRequests.signals(this.bound, super.getMultipartData());
	}

	@Override
	public Mono<WebSession> getSession() {
		return BoundRequests.signals(this.bound, super.getSession());
	}

	@Override
	public <T extends Principal> Mono<T> getPrincipal() {
		return BoundRequests.signals(this.bound, super.<T>getPrincipal());
	}

}
