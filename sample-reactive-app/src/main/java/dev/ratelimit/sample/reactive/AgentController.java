package dev.ratelimit.sample.reactive;

import java.util.Map;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.RateLimited;

/**
 * Handlers limited the reactive way: each call is decided when its
 * {@code Mono} or {@code Flux} is subscribed to, with keys read from the
 * request, and a refusal answers 429 with the HTTP contract.
 */
@RestController
class AgentController {

	/** Limited by the route rule on {@code /api/**} only (per client address). */
	@GetMapping("/api/hello")
	Mono<Map<String, String>> hello() {
		return Mono.just(Map.of("message", "hello"));
	}

	/** A token bucket per user: 5 at once, then 1 per second. */
	@RateLimited("agent-runs")
	@PostMapping("/agent/run")
	Mono<Map<String, String>> run() {
		return Mono.just(Map.of("status", "queued"));
	}

	/** A stream, decided once when it is subscribed to: 2 streams per user per minute. */
	@RateLimited("agent-streams")
	@GetMapping(path = "/agent/stream", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
	Flux<String> stream() {
		return Flux.just("thinking", "answering", "done");
	}

}
