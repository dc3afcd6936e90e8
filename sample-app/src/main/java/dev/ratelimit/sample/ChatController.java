package dev.ratelimit.sample;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.HttpStatusCodeException;

import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;

/**
 * The agent chat endpoint: a per-tenant rate limit for fairness, and a
 * per-tenant daily budget that reserves the most a request could cost before
 * calling the provider and settles to what it actually cost after. The
 * provider is called over HTTP through the provider client (see
 * {@link ProviderApi}).
 */
@RestController
class ChatController {

	private final ProviderApi provider;

	ChatController(ProviderApi provider) {
		this.provider = provider;
	}

	@RateLimited("tenant-chat")
	@CostBudget(value = "tenant-daily", estimate = "#request.maxTokens * 0.000002",
			actual = "#result.usage.costUsd")
	@PostMapping("/agent/chat")
	Reply chat(@RequestHeader(name = "X-Tenant-Id", required = false) String tenant,
			@RequestBody ChatRequest request) {
		return this.provider.complete(request);
	}

	/**
	 * The provider still refused once the client's retries and deadline were
	 * spent: the caller sees a temporary reduction of capacity and when to come
	 * back, never the provider's own answer.
	 */
	@ExceptionHandler(HttpStatusCodeException.class)
	ResponseEntity<ProblemDetail> providerRefused(HttpStatusCodeException ex) {
		HttpStatus status = (ex.getStatusCode().value() == 429 || ex.getStatusCode().value() == 503)
				? HttpStatus.SERVICE_UNAVAILABLE : HttpStatus.BAD_GATEWAY;
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, "The model provider is busy; retry shortly.");
		String retryAfter = (ex.getResponseHeaders() != null) ? ex.getResponseHeaders().getFirst(HttpHeaders.RETRY_AFTER)
				: null;
		return ResponseEntity.status(status)
			.header(HttpHeaders.RETRY_AFTER, (retryAfter != null) ? retryAfter : "1")
			.body(problem);
	}

}
