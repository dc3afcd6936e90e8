package dev.ratelimit.blocking;

import java.time.Duration;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentHashMap;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;

import dev.ratelimit.Concurrency;
import dev.ratelimit.RateLimited;
import dev.ratelimit.core.DecisionThreads;
import dev.ratelimit.core.Sleeper;
import dev.ratelimit.support.EnableAutoConfigurationWithoutSecurity;
import dev.ratelimit.web.reactive.ReactorDecisionThreads;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Wait mode in a WebFlux application: a call over the limit waits for its
 * turn on a Reactor timer ({@code Mono.delay}), holding no thread. The
 * limiter's {@link Sleeper} fails if anything sleeps, and BlockHound fails a
 * sleep on any event loop or Reactor timer thread; the handler then runs on
 * the request's event loop (a route rule) or the timer's thread (an annotated
 * method; the event loop when the wait ended before the call was chained to
 * it), not one of the bounded elastic pool. The waits are recorded and
 * ended at once by a timer of no length, so the test does not live through
 * them. A local cap in wait
 * mode, whose bulkhead can only wait by blocking, still waits on that pool:
 * BlockHound would fail a wait on an event loop.
 */
@SpringBootTest(classes = WaitModeWithoutSleepingTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "rate-limit.policies.paced.capacity=1",
				"rate-limit.policies.paced.refill=1/3s", "rate-limit.policies.paced.key=global",
				"rate-limit.policies.paced.max-wait=10s", "rate-limit.routes[0].pattern=/paced/**",
				"rate-limit.routes[0].policies=paced", "rate-limit.concurrency.local-wait.permits=1",
				"rate-limit.concurrency.local-wait.max-wait=1s" })
class WaitModeWithoutSleepingTests {

	static {
		BlockHoundInstalled.ensure();
	}

	/** The waits the decisions asked for, in microseconds. */
	static final Queue<Long> waits = new ConcurrentLinkedQueue<>();

	/** The thread each handler ran on, by path. */
	static final Map<String, String> threads = new ConcurrentHashMap<>();

	@LocalServerPort
	int port;

	@Test
	void aRouteRuleInWaitModeWaitsOnATimer() {
		assertThat(status("/paced/hello")).isEqualTo(200);
		// No token left: this call waits its turn (up to 3 s) on a timer and is let through.
		waits.clear();
		assertThat(status("/paced/hello")).isEqualTo(200);
		assertThat(waits).singleElement().satisfies((micros) -> assertThat(micros).isBetween(2_000_000L, 3_000_000L));
		// Once the timer fired, the request went back to its own event loop: not a bounded elastic thread.
		assertThat(threads.get("paced")).matches(".*-http-(epoll|nio|kqueue|io_uring)-\\d+");
	}

	@Test
	void anAnnotatedMethodInWaitModeWaitsOnATimer() {
		assertThat(status("/method")).isEqualTo(200);
		waits.clear();
		assertThat(status("/method")).isEqualTo(200);
		assertThat(waits).singleElement().satisfies((micros) -> assertThat(micros).isPositive());
		// On the timer's thread, or on the event loop when the recorded wait ended before the call was chained to
		// it: never a thread of the bounded elastic pool, which a sleep or a blocking wait would need.
		assertThat(threads.get("method")).doesNotStartWith("boundedElastic");
	}

	@Test
	void aLocalCapInWaitModeWaitsOffTheEventLoop() {
		// The first call holds the one permit until its answer is given; the second waits for it (up to 1 s) in
		// the bulkhead, which can only wait by parking: on an event loop BlockHound would make that a 500.
		Sinks.One<String> held = Sinks.one();
		Controller.answers.add(held.asMono());
		Mono<Integer> first = statusLater("/local-cap").cache();
		first.subscribe();
		await().atMost(Duration.ofSeconds(5)).until(() -> Controller.answers.isEmpty());
		Mono<Integer> second = statusLater("/local-cap").cache();
		second.subscribe();
		await().atMost(Duration.ofSeconds(5)).until(WaitModeWithoutSleepingTests::aThreadWaitsInTheBulkhead);
		held.tryEmitValue("released");
		assertThat(first.block(Duration.ofSeconds(10))).isEqualTo(200);
		assertThat(second.block(Duration.ofSeconds(10))).isEqualTo(200);
	}

	private static boolean aThreadWaitsInTheBulkhead() {
		for (StackTraceElement[] stack : Thread.getAllStackTraces().values()) {
			for (StackTraceElement frame : stack) {
				if (frame.getClassName().startsWith("io.github.resilience4j.bulkhead")) {
					return stack[0].getClassName().startsWith("jdk.internal.misc.Unsafe");
				}
			}
		}
		return false;
	}

	int status(String path) {
		return statusLater(path).block(Duration.ofSeconds(30));
	}

	Mono<Integer> statusLater(String path) {
		WebClient client = WebClient.builder().baseUrl("http://localhost:" + this.port).build();
		return client.get()
			.uri(path)
			.exchangeToMono((response) -> response.releaseBody().thenReturn(response.statusCode().value()));
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfigurationWithoutSecurity
	static class App {

		@Bean
		Controller controller() {
			return new Controller();
		}

		/**
		 * Where reactive decisions wait: each wait recorded, and ended by a
		 * Reactor timer of no length (on the timer's thread, as a real wait
		 * ends), so that the test does not live through it.
		 */
		@Bean
		DecisionThreads recordedWaits() {
			return new DecisionThreads() {

				@Override
				public void execute(Runnable task) {
					ReactorDecisionThreads.INSTANCE.execute(task);
				}

				@Override
				public CompletionStage<Void> delay(long micros) {
					waits.add(micros);
					return Mono.delay(Duration.ZERO).then().toFuture();
				}

			};
		}

		/** The limiter's way of waiting on a thread: nothing on the reactive path may use it. */
		@Bean
		Sleeper noSleeping() {
			return (micros) -> {
				throw new AssertionError("A thread slept " + micros + " µs for its turn");
			};
		}

	}

	@RestController
	static class Controller {

		@GetMapping("/paced/hello")
		Mono<String> paced() {
			return ran("paced");
		}

		@RateLimited(policy = "method", capacity = "1", refill = "1/3s", maxWait = "10s")
		@GetMapping("/method")
		Mono<String> method() {
			return ran("method");
		}

		/** What the next calls of the local cap answer with, in order; a call with none queued answers at once. */
		static final Queue<Mono<String>> answers = new ConcurrentLinkedQueue<>();

		@Concurrency("local-wait")
		@GetMapping("/local-cap")
		Mono<String> localCap() {
			Mono<String> answer = answers.poll();
			return (answer != null) ? answer : ran("local-cap");
		}

		private static Mono<String> ran(String path) {
			threads.put(path, Thread.currentThread().getName());
			return Mono.just(path);
		}

	}

}
