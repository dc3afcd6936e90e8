package dev.ratelimit.sample;

import java.io.IOException;
import java.util.Map;

import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.core.task.TaskExecutor;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;
import dev.ratelimit.budget.BudgetMeter;

/**
 * The agent chat, streamed as Server-Sent Events under the same per-tenant
 * rate limit and daily budget as {@code POST /agent/chat}. The answer is made
 * here (the prompt echoed word by word, a token each at $0.000002), so the
 * stream's cost is known only as it goes: the handler reserves the most the
 * answer may cost ({@code maxTokens}), reports each token to its
 * {@link BudgetMeter} before sending it, and is charged what it reported when
 * the stream ends — completed, failed or abandoned by its client. An answer
 * that would pass its reservation ends with a {@code budget-exceeded} event.
 */
@RestController
class ChatStreamController {

	private static final String TOKEN_PRICE = "0.000002";

	private final TaskExecutor writers = new SimpleAsyncTaskExecutor("chat-stream-");

	@RateLimited("tenant-chat")
	@CostBudget(value = "tenant-daily", estimate = "#request.maxTokens * 0.000002")
	@PostMapping(path = "/agent/chat/stream", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
	SseEmitter stream(@RequestHeader(name = "X-Tenant-Id", required = false) String tenant,
			@RequestBody ChatRequest request) {
		// Taken here, on the request's thread, and handed to the thread that writes the stream.
		BudgetMeter meter = BudgetMeter.current();
		SseEmitter emitter = new SseEmitter(60_000L);
		this.writers.execute(() -> answer(request, meter, emitter));
		return emitter;
	}

	private static void answer(ChatRequest request, BudgetMeter meter, SseEmitter emitter) {
		try {
			int tokens = 0;
			for (String word : request.prompt().strip().split("\\s+")) {
				if (!meter.add(TOKEN_PRICE)) {
					emitter.send(SseEmitter.event().name("budget-exceeded").data(Map.of("tokens", tokens)));
					emitter.complete();
					return;
				}
				emitter.send(SseEmitter.event().name("token").data(word));
				tokens++;
			}
			emitter.send(SseEmitter.event().name("done").data(Map.of("tokens", tokens)));
			emitter.complete();
		}
		catch (IOException ex) {
			// The client went away: the stream is settled with the tokens reported until now.
		}
	}

}
