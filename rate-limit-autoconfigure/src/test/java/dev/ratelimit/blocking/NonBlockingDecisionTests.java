package dev.ratelimit.blocking;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;

import dev.ratelimit.RateLimited;
import dev.ratelimit.support.EnableAutoConfigurationWithoutSecurity;
import dev.ratelimit.support.TestHttp;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A WebFlux application's route rules and annotated methods decided with
 * BlockHound installed: a
 * decision that blocked a Reactor Netty event loop would fail the request
 * (BlockHound throws on the loop, and the request answers 500), so every
 * answer being the contract's 200 or 429 shows that none did. Subclasses run
 * it on each backend. These tests run in a JVM of their own (see the
 * module's Surefire configuration): BlockHound instruments the whole JVM.
 */
abstract class NonBlockingDecisionTests {

	static {
		BlockHoundInstalled.ensure();
	}

	@LocalServerPort
	int port;

	@Test
	void blockHoundIsWatchingTheEventLoops() {
		// What a blocking decision on a non-blocking thread meets: the tests below would see it as a 500.
		BlockHoundInstalled.assertWatching();
	}

	@Test
	void aRouteRuleIsDecidedWithoutBlockingAnEventLoop() {
		for (int i = 0; i < 3; i++) {
			assertThat(status("/api/hello")).isEqualTo(200);
		}
		assertThat(status("/api/hello")).isEqualTo(429);
	}

	/**
	 * A request a route rule allowed goes on on its connection's event loop,
	 * whatever thread its decision completed on: not on Lettuce's, which reads
	 * every reply of the limiter's connection and would otherwise run the
	 * handlers and write the responses of every request decided on Redis.
	 */
	@Test
	void aRequestAllowedByARouteRuleGoesOnOnItsOwnEventLoop() {
		var answer = WebClient.builder()
			.baseUrl("http://localhost:" + this.port)
			.build()
			.get()
			.uri("/loop/thread")
			.retrieve()
			.toEntity(String.class)
			.block(Duration.ofSeconds(10));
		assertThat(answer.getHeaders().getFirst("RateLimit-Policy")).startsWith("\"loop\"");
		// The server's event loops (webflux-http-epoll-N in Boot 4, reactor-http-… in plain Reactor Netty).
		assertThat(answer.getBody()).matches(".*-http-(epoll|nio|kqueue|io_uring)-\\d+").doesNotContain("lettuce");
	}

	/**
	 * An annotated method returning {@code Mono} is decided when subscribed to:
	 * inline on the memory backend, off the event loop on Redis.
	 */
	@Test
	void anAnnotatedMonoMethodIsDecidedWithoutBlockingAnEventLoop() {
		assertThat(status("/runs")).isEqualTo(200);
		assertThat(status("/runs")).isIn(429, 503);
	}

	/**
	 * An ordinary handler method, returning a plain value, is limited per
	 * caller without blocking an event loop: on Redis, where its decision can
	 * only be taken synchronously, WebFlux calls it off the loop, its request
	 * bound there; with an argument read from the body too.
	 */
	@Test
	void aPlainHandlerMethodIsLimitedPerCallerWithoutBlockingAnEventLoop() {
		TestHttp http = TestHttp.on(this.port);
		assertThat(http.get("/plain", "X-User-Id", "ann").status()).isEqualTo(200);
		assertThat(http.get("/plain", "X-User-Id", "bob").status()).isEqualTo(200);
		assertThat(http.get("/plain", "X-User-Id", "ann").status()).isEqualTo(429);
		String json = "{\"text\":\"hi\"}";
		assertThat(http.post("/posted", json, "X-User-Id", "ann", "Content-Type", "application/json").status())
			.isEqualTo(200);
		assertThat(http.post("/posted", json, "X-User-Id", "bob", "Content-Type", "application/json").status())
			.isEqualTo(200);
		assertThat(http.post("/posted", json, "X-User-Id", "ann", "Content-Type", "application/json").status())
			.isEqualTo(429);
	}

	/**
	 * A call counted by outcome gives its unit back when its {@code Mono} ends,
	 * here on Reactor's parallel scheduler (as a WebClient's answer ends on an
	 * event loop): on Redis the give-back must not run there. Never counted, so
	 * every call of a limit of 1 is allowed.
	 */
	@Test
	void aGiveBackWhenTheResultEndsDoesNotBlockTheThreadItEndsOn() {
		for (int i = 0; i < 3; i++) {
			assertThat(status("/later")).as("call %d", i).isEqualTo(200);
		}
	}

	/**
	 * Sends a request; its client address (loopback) is its {@code per-ip} key.
	 * @param path the path
	 * @return the answer's status
	 */
	int status(String path) {
		WebClient client = WebClient.builder().baseUrl("http://localhost:" + this.port).build();
		return client.get()
			.uri(path)
			.exchangeToMono((response) -> response.releaseBody().thenReturn(response.statusCode().value()))
			.block(Duration.ofSeconds(10));
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfigurationWithoutSecurity
	static class App {

		@Bean
		Controller controller() {
			return new Controller();
		}

	}

	@RestController
	static class Controller {

		@GetMapping("/api/hello")
		Mono<String> hello() {
			return Mono.just("hello");
		}

		@GetMapping("/loop/thread")
		Mono<String> thread() {
			return Mono.fromSupplier(() -> Thread.currentThread().getName());
		}

		@RateLimited(policy = "later", capacity = "1", refill = "1/1h", countWhen = "false")
		@GetMapping("/later")
		Mono<String> later() {
			return Mono.delay(Duration.ofMillis(5)).thenReturn("later");
		}

		@RateLimited(policy = "plain", capacity = "1", refill = "1/1h", key = "header('X-User-Id')")
		@GetMapping("/plain")
		public String plain() {
			return "plain";
		}

		@RateLimited(policy = "posted", capacity = "1", refill = "1/1h", key = "header('X-User-Id')")
		@PostMapping("/posted")
		public String posted(@RequestBody Map<String, String> body) {
			return body.get("text");
		}

		@RateLimited(policy = "runs", capacity = "1", refill = "1/1h")
		@GetMapping("/runs")
		Mono<String> runs() {
			return Mono.just("queued");
		}

	}

}
