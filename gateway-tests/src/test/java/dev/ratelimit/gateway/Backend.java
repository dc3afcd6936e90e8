package dev.ratelimit.gateway;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * The service behind the gateway: a real HTTP server (Reactor Netty) on a free
 * local port, shared by the tests of a JVM. Any path answers 200 with the path
 * as its body; {@code /status/<code>/…} answers that status, and {@code /login}
 * 401 unless the header {@code X-Password} is {@code secret}. It counts the
 * requests that reach it, by path, so that a test can see that a refused
 * request was never proxied.
 */
public final class Backend {

	/** The header every answer of the backend carries, so that a test sees the answer was proxied. */
	public static final String REACHED = "X-Backend";

	private static Backend shared;

	private final DisposableServer server;

	private final Map<String, AtomicInteger> hits = new ConcurrentHashMap<>();

	private Backend() {
		this.server = HttpServer.create().host("127.0.0.1").port(0).handle((request, response) -> {
			String path = request.path().startsWith("/") ? request.path() : "/" + request.path();
			this.hits.computeIfAbsent(path, (key) -> new AtomicInteger()).incrementAndGet();
			int status = path.startsWith("/status/") ? Integer.parseInt(path.split("/")[2])
					: (path.equals("/login") && !"secret".equals(request.requestHeaders().get("X-Password"))) ? 401 : 200;
			return response.status(status).header(REACHED, "reached").sendString(Mono.just("backend " + path));
		}).bindNow();
	}

	/**
	 * Returns the backend of this JVM, started on first use and stopped when the JVM ends.
	 * @return the backend
	 */
	public static synchronized Backend shared() {
		if (shared == null) {
			shared = new Backend();
			Backend started = shared;
			Runtime.getRuntime().addShutdownHook(new Thread(started.server::disposeNow));
		}
		return shared;
	}

	/** @return the backend's base URI, {@code http://127.0.0.1:<port>} */
	public String uri() {
		return "http://127.0.0.1:" + this.server.port();
	}

	/**
	 * Returns how many requests for a path reached the backend.
	 * @param path the path as the backend saw it
	 * @return the count
	 */
	public int hits(String path) {
		AtomicInteger count = this.hits.get(path);
		return (count != null) ? count.get() : 0;
	}

}
