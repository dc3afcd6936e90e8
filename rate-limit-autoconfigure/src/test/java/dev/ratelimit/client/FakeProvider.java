package dev.ratelimit.client;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * A real HTTP server on a free local port standing in for a provider: each
 * request gets the next scripted answer, or 200 once the script is used up,
 * and is recorded.
 */
final class FakeProvider implements AutoCloseable {

	/**
	 * An answer.
	 * @param status the status
	 * @param headers its header fields, name then value
	 */
	record Answer(int status, List<String> headers) {

		static Answer of(int status, String... headers) {
			return new Answer(status, List.of(headers));
		}

	}

	/**
	 * A request as the provider saw it.
	 * @param method the method
	 * @param path the path
	 */
	record Seen(String method, String path) {
	}

	private final HttpServer server;

	private final ExecutorService executor = Executors.newCachedThreadPool();

	private final Queue<Answer> script = new ConcurrentLinkedQueue<>();

	private final List<Seen> seen = new CopyOnWriteArrayList<>();

	private volatile Supplier<Answer> otherwise = () -> Answer.of(200);

	private volatile CountDownLatch arrived = new CountDownLatch(0);

	private volatile CountDownLatch gate = new CountDownLatch(0);

	FakeProvider() {
		try {
			this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 200);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		this.server.setExecutor(this.executor);
		this.server.createContext("/", this::handle);
		this.server.start();
	}

	URI url() {
		return URI.create("http://127.0.0.1:" + this.server.getAddress().getPort());
	}

	/** Answers the next requests so, in order. */
	FakeProvider then(Answer... answers) {
		this.script.addAll(List.of(answers));
		return this;
	}

	/** Answers every request past the script so. */
	FakeProvider otherwise(Supplier<Answer> answer) {
		this.otherwise = answer;
		return this;
	}

	/**
	 * Holds every request until the gate opens; {@code arrived} counts the
	 * requests held, so that a test knows one is in the provider's hands.
	 */
	FakeProvider hold(CountDownLatch arrived, CountDownLatch gate) {
		this.arrived = arrived;
		this.gate = gate;
		return this;
	}

	List<Seen> seen() {
		return List.copyOf(this.seen);
	}

	private void handle(HttpExchange exchange) throws IOException {
		try (exchange) {
			exchange.getRequestBody().readAllBytes();
			this.seen.add(new Seen(exchange.getRequestMethod(), exchange.getRequestURI().getPath()));
			this.arrived.countDown();
			try {
				this.gate.await(30, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			Answer answer = this.script.poll();
			answer = (answer != null) ? answer : this.otherwise.get();
			for (int i = 0; i + 1 < answer.headers().size(); i += 2) {
				exchange.getResponseHeaders().add(answer.headers().get(i), answer.headers().get(i + 1));
			}
			byte[] body = ("answer " + answer.status()).getBytes(StandardCharsets.UTF_8);
			exchange.sendResponseHeaders(answer.status(), body.length);
			exchange.getResponseBody().write(body);
		}
	}

	@Override
	public void close() {
		this.server.stop(0);
		this.executor.shutdownNow();
	}

}
