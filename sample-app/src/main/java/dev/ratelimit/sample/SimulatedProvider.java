package dev.ratelimit.sample;

import java.math.BigDecimal;

import org.springframework.stereotype.Service;

import dev.ratelimit.Concurrency;
import dev.ratelimit.RateLimited;

/**
 * Stands in for a paid model provider: answers instantly and reports usage as
 * a real provider would, at $0.000002 per token. The answer uses a token per
 * character of the prompt (at least 16), never more than the request allows,
 * so the actual cost is usually well below the reserved estimate.
 * <p>
 * Like a real provider client it is protected on our side: the provider's
 * published rate (policy {@code provider-rate}, in wait mode: callers over it
 * wait their turn instead of failing) and its cap on parallel requests
 * (policy {@code provider}, 4 in flight).
 */
@Service
public class SimulatedProvider {

	/** Price per token in US dollars. */
	public static final BigDecimal PRICE_PER_TOKEN = new BigDecimal("0.000002");

	/**
	 * Completes a prompt.
	 * @param request the request
	 * @return the reply with its usage
	 */
	@RateLimited("provider-rate")
	@Concurrency("provider")
	public Reply complete(ChatRequest request) {
		String prompt = (request.prompt() != null) ? request.prompt() : "";
		int tokens = Math.min(Math.max(16, prompt.length()), Math.max(0, request.maxTokens()));
		return new Reply("echo: " + prompt, new Reply.Usage(tokens, PRICE_PER_TOKEN.multiply(BigDecimal.valueOf(tokens))));
	}

}
