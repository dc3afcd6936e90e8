package dev.ratelimit.blocking;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;

import dev.ratelimit.Concurrency;
import dev.ratelimit.concurrency.AdaptiveConcurrencyLimiter;
import dev.ratelimit.concurrency.Priority;
import dev.ratelimit.support.EnableAutoConfigurationWithoutSecurity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Adaptive caps in a WebFlux application, with BlockHound watching the event
 * loops: a route rule protecting a path and an annotated {@code Mono} method
 * shed the lowest class with 503 while a critical call within its share gets
 * in, and a permit goes back when its request completes or its client goes
 * away. The limit stays at 2 (AIMD between 1 and 2); critical keeps one.
 */
@SpringBootTest(classes = AdaptiveCapReactiveTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive",
				"rate-limit.concurrency.api.adaptive.algorithm=aimd", "rate-limit.concurrency.api.adaptive.initial-limit=2",
				"rate-limit.concurrency.api.adaptive.max-limit=2", "rate-limit.concurrency.api.priority=header('X-Priority')",
				"rate-limit.concurrency.api.shares.critical=50", "rate-limit.routes[0].pattern=/api/**",
				"rate-limit.routes[0].concurrency=api", "rate-limit.concurrency.jobs.adaptive.algorithm=aimd",
				"rate-limit.concurrency.jobs.adaptive.initial-limit=1", "rate-limit.concurrency.jobs.adaptive.max-limit=1" })
class AdaptiveCapReactiveTests {

	static {
		BlockHoundInstalled.ensure();
	}

	@LocalServerPort
	int port;

	@Autowired
	Gate gate;

	@Autowired
	AdaptiveConcurrencyLimiter adaptive;

	@AfterEach
	void letGo() {
		this.gate.release();
	}

	@Test
	void blockHoundIsWatchingTheEventLoops() {
		BlockHoundInstalled.assertWatching();
	}

	@Test
	void aRouteRuleShedsTheLowestClassAndLetsACriticalCallWithinItsShareIn() throws InterruptedException {
		Mono<Integer> held = holdInside("/api/hold", "sheddable");
		assertThat(answer("/api/quick", "sheddable")).startsWith("503 ")
			.contains("temporary-reduced-capacity")
			.contains("The service is shedding load");
		assertThat(answer("/api/quick", "critical")).isEqualTo("200 quick");
		this.gate.release();
		assertThat(held.block(Duration.ofSeconds(10))).isEqualTo(200);
		assertThat(answer("/api/quick", "sheddable")).isEqualTo("200 quick");
		// Given back once the exchange is done, which may be just after the client has its answer.
		await().atMost(Duration.ofSeconds(10)).until(() -> this.adaptive.inFlight("api", Priority.SHEDDABLE) == 0);
	}

	@Test
	void aPermitGoesBackWhenItsClientGoesAway() throws InterruptedException {
		this.gate.entered = new CountDownLatch(1);
		this.gate.sink = Sinks.one();
		Disposable call = client().get().uri("/api/hold").header("X-Priority", "sheddable").retrieve()
			.toBodilessEntity().subscribe();
		assertThat(this.gate.entered.await(10, TimeUnit.SECONDS)).isTrue();
		assertThat(this.adaptive.inFlight("api", Priority.SHEDDABLE)).isOne();
		call.dispose();
		// The server sees the connection close and cancels the request: the permit goes back, unmeasured.
		await().atMost(Duration.ofSeconds(10)).until(() -> this.adaptive.inFlight("api", Priority.SHEDDABLE) == 0);
		assertThat(this.adaptive.limit("api")).hasValue(2);
	}

	@Test
	void anAnnotatedMonoMethodShedsWith503() throws InterruptedException {
		Mono<Integer> held = holdInside("/jobs", null);
		assertThat(answer("/jobs", null)).startsWith("503 ").contains("temporary-reduced-capacity");
		this.gate.release();
		assertThat(held.block(Duration.ofSeconds(10))).isEqualTo(200);
		assertThat(answer("/jobs", null)).isEqualTo("200 held");
	}

	private Mono<Integer> holdInside(String path, String priority) throws InterruptedException {
		this.gate.entered = new CountDownLatch(1);
		this.gate.sink = Sinks.one();
		Mono<Integer> call = client().get()
			.uri(path)
			.headers((headers) -> {
				if (priority != null) {
					headers.set("X-Priority", priority);
				}
			})
			.exchangeToMono((response) -> response.releaseBody().thenReturn(response.statusCode().value()))
			.cache();
		call.subscribe();
		assertThat(this.gate.entered.await(10, TimeUnit.SECONDS)).isTrue();
		return call;
	}

	private String answer(String path, String priority) {
		return client().get()
			.uri(path)
			.headers((headers) -> {
				if (priority != null) {
					headers.set("X-Priority", priority);
				}
			})
			.exchangeToMono((response) -> response.bodyToMono(String.class)
				.defaultIfEmpty("")
				.map((body) -> response.statusCode().value() + " " + body))
			.block(Duration.ofSeconds(10));
	}

	private WebClient client() {
		return WebClient.builder().baseUrl("http://localhost:" + this.port).build();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfigurationWithoutSecurity
	static class App {

		@Bean
		Gate gate() {
			return new Gate();
		}

		@Bean
		Controller controller(Gate gate) {
			return new Controller(gate);
		}

	}

	/** Holds a request in flight without a thread: it completes when the test lets go. */
	static class Gate {

		volatile CountDownLatch entered = new CountDownLatch(1);

		volatile Sinks.One<String> sink = Sinks.one();

		Mono<String> held() {
			return Mono.defer(() -> {
				this.entered.countDown();
				return this.sink.asMono();
			});
		}

		void release() {
			this.sink.tryEmitValue("held");
		}

	}

	@RestController
	static class Controller {

		private final Gate gate;

		Controller(Gate gate) {
			this.gate = gate;
		}

		@GetMapping("/api/hold")
		Mono<String> hold() {
			return this.gate.held();
		}

		@GetMapping("/api/quick")
		Mono<String> quick() {
			return Mono.just("quick");
		}

		@Concurrency("jobs")
		@GetMapping("/jobs")
		Mono<String> jobs() {
			return this.gate.held();
		}

	}

}
