package dev.ratelimit.sample.reactive;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;
import dev.ratelimit.budget.BudgetMeter;
import dev.ratelimit.budget.MeteredFlux;

/**
 * The agent chat, per tenant: a rate limit for fairness ({@code tenant-chat})
 * and a daily budget in US dollars ({@code tenant-daily}), over a provider
 * called with the provider {@code WebClient} (see {@link ProviderApi}).
 * {@code POST /agent/chat} reserves the most the answer may cost and is
 * charged what the provider reports; {@code POST /agent/chat/stream} streams
 * the answer and reports each token to its budget before sending it, so a
 * stream stops at its reservation (with a last {@code budget-exceeded} event)
 * and is charged what it sent, even when its client goes away.
 */
@RestController
class ChatController {

	private final ProviderApi provider;

	ChatController(ProviderApi provider) {
		this.provider = provider;
	}

	@RateLimited("tenant-chat")
	@CostBudget(value = "tenant-daily", estimate = "#request.maxTokens * 0.000002", actual = "#result.usage.costUsd")
	@PostMapping("/agent/chat")
	Mono<Reply> chat(@RequestBody ChatRequest request) {
		return this.provider.complete(request);
	}

	@RateLimited("tenant-chat")
	@CostBudget(value = "tenant-daily", estimate = "#request.maxTokens * 0.000002")
	@PostMapping(path = "/agent/chat/stream", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
	Flux<ServerSentEvent<String>> stream(@RequestBody ChatRequest request) {
		// Taken here, in the method's body, where the advice binds it.
		BudgetMeter meter = BudgetMeter.current();
		return MeteredFlux.metered(this.provider.stream(request), meter, (token) -> SimulatedProvider.PRICE_PER_TOKEN)
			.map((token) -> ServerSentEvent.builder(token).event("token").build())
			.concatWith(Mono.fromSupplier(() -> ServerSentEvent.builder("")
				.event(meter.stopped() ? "budget-exceeded" : "done")
				.build()));
	}

}
