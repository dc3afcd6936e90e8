package dev.ratelimit.sample;

import java.io.IOException;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.HttpServerErrorException;
import org.springframework.web.client.HttpStatusCodeException;

import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;
import dev.ratelimit.client.ProviderClients;
import dev.ratelimit.web.servlet.Rejections;

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

	private final ObjectProvider<ProviderClients> clients;

	private final ObjectProvider<Rejections> rejections;

	ChatController(ProviderApi provider, ObjectProvider<ProviderClients> clients,
			ObjectProvider<Rejections> rejections) {
		this.provider = provider;
		this.clients = clients;
		this.rejections = rejections;
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
	 * spent: answered as the limiter answers a call refused by the provider's
	 * pause, its rate or its cap (capacity every tenant shares and none is told
	 * about): 503 with {@code Retry-After} and a "temporary reduced capacity"
	 * problem, never the provider's own answer nor its name.
	 */
	@ExceptionHandler({ HttpClientErrorException.TooManyRequests.class,
			HttpServerErrorException.ServiceUnavailable.class })
	void providerRefused(HttpServletRequest request, HttpServletResponse response) throws IOException {
		ProviderClients clients = this.clients.getIfAvailable();
		Rejections rejections = this.rejections.getIfAvailable();
		if (clients == null || rejections == null) {
			// The limiter is switched off (rate-limit.enabled=false): the status alone.
			response.sendError(HttpStatus.SERVICE_UNAVAILABLE.value());
			return;
		}
		rejections.send(request, response, clients.client("provider").refusal());
	}

	/** Any other answer of the provider's is a failure of the service's upstream. */
	@ExceptionHandler(HttpStatusCodeException.class)
	ResponseEntity<ProblemDetail> providerFailed(HttpStatusCodeException ex) {
		return ResponseEntity.status(HttpStatus.BAD_GATEWAY)
			.body(ProblemDetail.forStatusAndDetail(HttpStatus.BAD_GATEWAY, "The model provider failed."));
	}

}
