package dev.ratelimit.sample.gateway;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * The service behind the gateway in the tests: a real HTTP server (Reactor
 * Netty) on a free local port. Any path answers 200 with
 * {@code backend /<path>} and the header {@value #REACHED}, and is counted,
 * so that a test sees which requests were proxied.
 */
final class Backend implements AutoCloseable {

	/** The header every answer of the backend carries. */
	static final String REACHED = "X-Backend";

	private final Map<String, AtomicInteger> hits = new ConcurrentHashMap<>();

	private final DisposableServer server;

	Backend() {
		this.server = HttpServer.create().host("127.0.0.1").port(0).handle((request, response) -> {
			String path = "/" + request.path();
			this.hits.computeIfAbsent(path, (key) -> new AtomicInteger()).incrementAndGet();
			return response.header(REACHED, "reached").sendString(Mono.just("backend " + path));
		}).bindNow();
	}

	/** @return {@code http://127.0.0.1:<port>} */
	String uri() {
		return "http://127.0.0.1:" + this.server.port();
	}

	/**
	 * Returns how many requests for a path reached the backend.
	 * @param path the path as the backend saw it, such as {@code /api/hello}
	 * @return the count
	 */
	int hits(String path) {
		AtomicInteger count = this.hits.get(path);
		return (count != null) ? count.get() : 0;
	}

	@Override
	public void close() {
		this.server.disposeNow();
	}

}
