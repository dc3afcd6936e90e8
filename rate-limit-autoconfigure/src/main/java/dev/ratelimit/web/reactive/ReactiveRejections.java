package dev.ratelimit.web.reactive;

import java.nio.charset.StandardCharsets;

import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.ErrorResponse;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;

import dev.ratelimit.core.RateLimitException;
import dev.ratelimit.web.Disclosures;
import dev.ratelimit.web.HeaderWriter;
import dev.ratelimit.web.ProblemJson;
import dev.ratelimit.web.RefusalFields;
import dev.ratelimit.web.Refusals;
import dev.ratelimit.web.Rejection;

/**
 * Answers limiter exceptions in a WebFlux application with the HTTP contract
 * of the servlet side: the same {@link Rejection} (described by
 * {@link Refusals}, naming only the limits the caller may see), the same
 * RFC 9457 body ({@link ProblemJson}),
 * {@code Retry-After} and {@code Cache-Control: no-store}. As a
 * {@link WebExceptionHandler} ordered before Spring Boot's error handler, it
 * turns a refusal thrown by an annotated method (or its {@code Mono}) into a
 * 429 or 503 rather than a logged 500; the route filter answers through it too.
 */
public final class ReactiveRejections implements WebExceptionHandler, Ordered {

	/** Before Spring Boot's {@code ErrorWebExceptionHandler} (-1), which would answer 500. */
	public static final int ORDER = -2;

	/** Writes a refusal's fields to a WebFlux response's headers. */
	static final HeaderWriter<HttpHeaders> FIELDS = HttpHeaders::set;

	/** The WebFlux stack's writer: one instance, no function allocated per request. */
	static final HeaderWriter<ServerHttpResponse> RESPONSE_FIELDS = HeaderWriter
		.committable((response, name, value) -> response.getHeaders().set(name, value), ServerHttpResponse::isCommitted);

	private final Refusals refusals;

	/**
	 * Creates the handler.
	 * @param refusals describes refusals as the caller may be told about them
	 */
	public ReactiveRejections(Refusals refusals) {
		this.refusals = refusals;
	}

	/** @return the rule that describes refusals, for an answer written by someone else (a gateway's) */
	Refusals refusals() {
		return this.refusals;
	}

	@Override
	public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
		return (ex instanceof RateLimitException refusal) ? send(exchange, refusal) : Mono.error(ex);
	}

	/**
	 * Answers a refusal of a request.
	 * @param exchange the request and its response, not yet committed
	 * @param refusal the limiter's exception
	 * @return completes when the answer is written
	 */
	Mono<Void> send(ServerWebExchange exchange, RateLimitException refusal) {
		if (exchange.getResponse().isCommitted()) {
			// Refused once the answer had begun (a stream): too late to answer, so it ends with the error.
			return Mono.error(refusal);
		}
		Disclosures disclosures = Disclosures.of(exchange.getAttributes());
		Rejection rejection = this.refusals.describe((disclosures != null) ? disclosures : Disclosures.NONE,
				refusal);
		ServerHttpResponse response = exchange.getResponse();
		response.setStatusCode(HttpStatusCode.valueOf(rejection.status()));
		HttpHeaders headers = response.getHeaders();
		RefusalFields.write(rejection, headers, FIELDS);
		headers.setContentType(MediaType.APPLICATION_PROBLEM_JSON);
		byte[] body = ProblemJson.body(rejection, exchange.getRequest().getPath().value())
			.getBytes(StandardCharsets.UTF_8);
		DataBuffer buffer = response.bufferFactory().wrap(body);
		return response.writeWith(Mono.just(buffer));
	}

	/**
	 * Returns the status a request that failed will be answered with, as the
	 * exception handlers after the filters will answer it: a refusal's by the
	 * contract, an {@link ErrorResponse}'s (a {@code ResponseStatusException})
	 * or a {@link ResponseStatus @ResponseStatus} exception's own. In Spring
	 * MVC these are resolved inside the chain, so the servlet filter reads them
	 * from the response; WebFlux resolves them after the filters have seen the
	 * error.
	 * @param exchange the request and its response
	 * @param failure what the request failed with
	 * @return the status, or the response's so far ({@code -1} when none) for any other failure or a
	 * response already committed
	 */
	int statusOf(ServerWebExchange exchange, Throwable failure) {
		ServerHttpResponse response = exchange.getResponse();
		if (!response.isCommitted()) {
			if (failure instanceof RateLimitException refusal) {
				Disclosures disclosures = Disclosures.of(exchange.getAttributes());
				return this.refusals.describe((disclosures != null) ? disclosures : Disclosures.NONE, refusal).status();
			}
			if (failure instanceof ErrorResponse error) {
				return error.getStatusCode().value();
			}
			ResponseStatus annotated = AnnotatedElementUtils.findMergedAnnotation(failure.getClass(),
					ResponseStatus.class);
			if (annotated != null) {
				return annotated.code().value();
			}
		}
		return ReactiveExchange.status(response);
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

}
