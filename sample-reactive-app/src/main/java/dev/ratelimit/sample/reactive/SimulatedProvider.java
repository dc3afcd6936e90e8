package dev.ratelimit.sample.reactive;

import java.math.BigDecimal;
import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Stands in for a paid model provider, over real HTTP on a port of its own
 * ({@code sample.provider.port}, a free one by default), served by Reactor
 * Netty: {@code POST /v1/complete} answers a {@link ChatRequest} with a
 * {@link Reply} after a short latency, and {@code POST /v1/stream} streams the
 * answer as Server-Sent Events, a word per token and event. A token costs
 * $0.000002 and the answer echoes the prompt. A completion never uses more
 * tokens than the request allows; a stream takes {@code maxTokens} as a hint
 * only, as a model counting reasoning tokens does, and may send more: what
 * the caller's budget meter is there to stop. It counts what it serves and how many requests it had in
 * flight at most, so that tests can check that our client kept to its cap.
 */
@Component
public class SimulatedProvider implements SmartLifecycle {

	/** Price per token in US dollars. */
	public static final BigDecimal PRICE_PER_TOKEN = new BigDecimal("0.000002");

	private static final JsonMapper json = JsonMapper.builder().build();

	private final int port;

	private final Duration latency;

	private final AtomicInteger inFlight = new AtomicInteger();

	private final AtomicInteger maxInFlight = new AtomicInteger();

	private final AtomicLong served = new AtomicLong();

	private volatile DisposableServer server;

	SimulatedProvider(@Value("${sample.provider.port:0}") int port,
			@Value("${sample.provider.latency:25ms}") Duration latency) {
		this.port = port;
		this.latency = latency;
	}

	/**
	 * Returns where the provider answers.
	 * @return its base URL, such as {@code http://127.0.0.1:41234/v1}
	 */
	public URI url() {
		return URI.create("http://127.0.0.1:" + this.server.port() + "/v1");
	}

	/** @return the most requests it served at once */
	public int maxInFlight() {
		return this.maxInFlight.get();
	}

	/** @return the requests it answered */
	public long served() {
		return this.served.get();
	}

	private Mono<Void> complete(HttpServerRequest request, HttpServerResponse response) {
		return serving(request.receive().aggregate().asString().map((body) -> json.readValue(body, ChatRequest.class))
			.delayElement(this.latency)
			.flatMap((chat) -> {
				String[] tokens = tokens(chat);
				Reply reply = new Reply(String.join(" ", tokens), new Reply.Usage(tokens.length,
						PRICE_PER_TOKEN.multiply(BigDecimal.valueOf(tokens.length))));
				return response.header("Content-Type", "application/json")
					.sendString(Mono.just(json.writeValueAsString(reply)))
					.then();
			}));
	}

	private Mono<Void> stream(HttpServerRequest request, HttpServerResponse response) {
		return serving(request.receive().aggregate().asString().map((body) -> json.readValue(body, ChatRequest.class))
			.flatMap((chat) -> response.sse()
				.sendString(Flux.fromArray(words(chat))
					.delayElements(this.latency.dividedBy(5))
					.map((token) -> "event: token\ndata: " + token + "\n\n"))
				.then()));
	}

	/** Counts a request in flight while it is served. */
	private Mono<Void> serving(Mono<Void> answer) {
		return Mono.defer(() -> {
			this.maxInFlight.accumulateAndGet(this.inFlight.incrementAndGet(), Math::max);
			return answer;
		}).doFinally((signal) -> {
			this.inFlight.decrementAndGet();
			this.served.incrementAndGet();
		});
	}

	/** A completion's tokens: the prompt's words, as many as the request allows. */
	private static String[] tokens(ChatRequest request) {
		String[] words = words(request);
		return Arrays.copyOf(words, Math.min(words.length, Math.max(0, request.maxTokens())));
	}

	/** A stream's tokens: every word of the prompt. */
	private static String[] words(ChatRequest request) {
		String prompt = (request.prompt() != null) ? request.prompt().strip() : "";
		return prompt.isEmpty() ? new String[0] : prompt.split("\\s+");
	}

	@Override
	public void start() {
		this.server = HttpServer.create()
			.host("127.0.0.1")
			.port(this.port)
			.route((routes) -> routes.post("/v1/complete", this::complete).post("/v1/stream", this::stream))
			.bindNow();
	}

	@Override
	public void stop() {
		DisposableServer server = this.server;
		if (server != null) {
			server.disposeNow();
		}
	}

	@Override
	public boolean isRunning() {
		DisposableServer server = this.server;
		return server != null && !server.isDisposed();
	}

}
