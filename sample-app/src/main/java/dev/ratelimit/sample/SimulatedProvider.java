package dev.ratelimit.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Stands in for a paid model provider, over real HTTP on a port of its own
 * ({@code sample.provider.port}, a free one by default): {@code POST /v1/complete}
 * answers a {@link ChatRequest} with a {@link Reply} after a short latency, at
 * $0.000002 per token. The answer uses a token per character of the prompt (at
 * least 16), never more than the request allows, so the actual cost is usually
 * well below the reserved estimate.
 * <p>
 * Like a real provider it enforces its own limits, counted here and nowhere
 * else: a rate (a token bucket of {@value #RATE_PER_SECOND} per second, as
 * many at once) and {@value #PARALLEL} requests in flight. Over either it
 * answers 429 with {@code Retry-After}. It counts what it sees, so a test can
 * check that our client kept to its limits. {@link #refuseNext} makes it
 * refuse like a provider in trouble, to show what the service's callers get
 * then.
 */
@Component
public class SimulatedProvider implements SmartLifecycle {

	/** Price per token in US dollars. */
	public static final BigDecimal PRICE_PER_TOKEN = new BigDecimal("0.000002");

	/** Requests per second the provider accepts (and its burst). */
	public static final int RATE_PER_SECOND = 25;

	/** Requests the provider serves at once. */
	public static final int PARALLEL = 5;

	private static final JsonMapper json = JsonMapper.builder().build();

	private final int port;

	private final long latencyMillis;

	private final AtomicInteger inFlight = new AtomicInteger();

	private final AtomicInteger maxInFlight = new AtomicInteger();

	private final AtomicLong served = new AtomicLong();

	private final AtomicLong refusedForRate = new AtomicLong();

	private final AtomicLong refusedForParallel = new AtomicLong();

	/** Guarded by this: requests still to refuse whatever the limits say, and the Retry-After they get. */
	private int troubled;

	private long troubledRetryAfterSeconds;

	/** Guarded by this: the bucket's tokens and when they were counted. */
	private double tokens = RATE_PER_SECOND;

	private long countedAtNanos = System.nanoTime();

	private HttpServer server;

	private ExecutorService executor;

	SimulatedProvider(@Value("${sample.provider.port:0}") int port,
			@Value("${sample.provider.latency:25ms}") java.time.Duration latency) {
		this.port = port;
		this.latencyMillis = latency.toMillis();
	}

	/**
	 * Returns where the provider answers.
	 * @return its base URL, such as {@code http://127.0.0.1:41234/v1}
	 */
	public URI url() {
		return URI.create("http://127.0.0.1:" + this.server.getAddress().getPort() + "/v1");
	}

	private void complete(HttpExchange exchange) throws IOException {
		try (exchange) {
			long troubled = takeTrouble();
			if (troubled > 0) {
				refuse(exchange, "trouble", troubled);
				return;
			}
			if (!takeToken()) {
				this.refusedForRate.incrementAndGet();
				refuse(exchange, "rate", 1);
				return;
			}
			int now = this.inFlight.incrementAndGet();
			try {
				if (now > PARALLEL) {
					this.refusedForParallel.incrementAndGet();
					refuse(exchange, "parallel", 1);
					return;
				}
				this.maxInFlight.accumulateAndGet(now, Math::max);
				ChatRequest request = json.readValue(exchange.getRequestBody(), ChatRequest.class);
				TimeUnit.MILLISECONDS.sleep(this.latencyMillis);
				this.served.incrementAndGet();
				byte[] body = json.writeValueAsBytes(answer(request));
				exchange.getResponseHeaders().add("Content-Type", "application/json");
				exchange.sendResponseHeaders(200, body.length);
				exchange.getResponseBody().write(body);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				exchange.sendResponseHeaders(503, -1);
			}
			finally {
				this.inFlight.decrementAndGet();
			}
		}
	}

	private static Reply answer(ChatRequest request) {
		String prompt = (request.prompt() != null) ? request.prompt() : "";
		int tokens = Math.min(Math.max(16, prompt.length()), Math.max(0, request.maxTokens()));
		return new Reply("echo: " + prompt, new Reply.Usage(tokens, PRICE_PER_TOKEN.multiply(BigDecimal.valueOf(tokens))));
	}

	private synchronized boolean takeToken() {
		long now = System.nanoTime();
		this.tokens = Math.min(RATE_PER_SECOND, this.tokens + (now - this.countedAtNanos) * RATE_PER_SECOND / 1e9);
		this.countedAtNanos = now;
		if (this.tokens < 1) {
			return false;
		}
		this.tokens -= 1;
		return true;
	}

	/**
	 * Refuses the next requests with 429 and a {@code Retry-After}, whatever its
	 * limits say, as a provider in trouble does.
	 * @param requests how many requests to refuse
	 * @param retryAfter the pause to ask for, in whole seconds
	 */
	public synchronized void refuseNext(int requests, java.time.Duration retryAfter) {
		this.troubled = requests;
		this.troubledRetryAfterSeconds = retryAfter.toSeconds();
	}

	/** @return the Retry-After in seconds when this request is to be refused as in trouble, else 0 */
	private synchronized long takeTrouble() {
		if (this.troubled <= 0) {
			return 0;
		}
		this.troubled--;
		return this.troubledRetryAfterSeconds;
	}

	private static void refuse(HttpExchange exchange, String limit, long retryAfterSeconds) throws IOException {
		exchange.getResponseHeaders().add("Retry-After", Long.toString(retryAfterSeconds));
		exchange.getResponseHeaders().add("X-Refused-By", limit);
		exchange.sendResponseHeaders(429, -1);
	}

	/** @return the most requests it served at once */
	public int maxInFlight() {
		return this.maxInFlight.get();
	}

	/** @return the requests it answered */
	public long served() {
		return this.served.get();
	}

	/** @return the requests it refused because they came faster than its rate */
	public long refusedForRate() {
		return this.refusedForRate.get();
	}

	/** @return the requests it refused because too many were in flight */
	public long refusedForParallel() {
		return this.refusedForParallel.get();
	}

	@Override
	public void start() {
		try {
			this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), this.port), 100);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("The simulated provider cannot listen on port " + this.port, ex);
		}
		this.executor = Executors.newCachedThreadPool();
		this.server.setExecutor(this.executor);
		this.server.createContext("/v1/complete", this::complete);
		this.server.start();
	}

	@Override
	public void stop() {
		this.server.stop(0);
		this.executor.shutdownNow();
		this.server = null;
	}

	@Override
	public boolean isRunning() {
		return this.server != null;
	}

	@Override
	public int getPhase() {
		// Before the web server: the provider answers by the time the app takes calls.
		return SmartLifecycle.DEFAULT_PHASE - 2048;
	}

}
