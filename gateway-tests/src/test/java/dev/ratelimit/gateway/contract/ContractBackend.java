package dev.ratelimit.gateway.contract;

import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import org.springframework.web.util.UriComponentsBuilder;

import dev.ratelimit.support.HeldCalls;

/**
 * The service behind the gateway for the web contract's scenarios: the same
 * endpoints as the applications of the other stacks serve ({@code /r/...}),
 * on a real HTTP server (Reactor Netty) on a free local port, one per JVM.
 * {@code /r/outcome/fail} answers 500, {@code /r/outcome/thrown} 401, {@code /r/<scenario>/hold?id=…} is held until
 * the test releases it ({@link HeldCalls}), anything else answers 200.
 */
final class ContractBackend {

	private static ContractBackend shared;

	private final DisposableServer server;

	private ContractBackend() {
		this.server = HttpServer.create().host("127.0.0.1").port(0).handle((request, response) -> {
			String path = request.fullPath();
			if (path.equals("/r/outcome/fail")) {
				return response.status(500).sendString(Mono.just("failed"));
			}
			if (path.equals("/r/outcome/thrown")) {
				// What a service behind the gateway answers: the status itself.
				return response.status(401).sendString(Mono.just("unauthorized"));
			}
			if (path.endsWith("/hold")) {
				String id = UriComponentsBuilder.fromUriString(request.uri()).build().getQueryParams().getFirst("id");
				return response.sendString(Mono.fromFuture(() -> HeldCalls.enter(id)));
			}
			return response.sendString(Mono.just("ok"));
		}).bindNow();
	}

	/**
	 * Returns the backend of this JVM, started on first use and stopped when the JVM ends.
	 * @return the backend
	 */
	static synchronized ContractBackend shared() {
		if (shared == null) {
			shared = new ContractBackend();
			ContractBackend started = shared;
			Runtime.getRuntime().addShutdownHook(new Thread(started.server::disposeNow));
		}
		return shared;
	}

	/** @return the backend's base URI, {@code http://127.0.0.1:<port>} */
	String uri() {
		return "http://127.0.0.1:" + this.server.port();
	}

}
