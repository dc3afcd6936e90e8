package dev.ratelimit.sample;

import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;

/**
 * The agent chat endpoint: a per-tenant rate limit for fairness, and a
 * per-tenant daily budget that reserves the most a request could cost before
 * calling the provider and settles to what it actually cost after.
 */
@RestController
class ChatController {

	private final SimulatedProvider provider;

	ChatController(SimulatedProvider provider) {
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

}
