package dev.ratelimit.metrics;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;

import dev.ratelimit.support.EnableAutoConfigurationWithoutSecurity;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A WebFlux application over real HTTP with an {@link ObservationRegistry},
 * which Spring's HTTP handler observes every request with: the request's
 * observation lives in Reactor's context, not on the thread, and the route
 * limits put it in scope while they decide, so that a policy's and a cap's
 * decisions (in memory, inline on the event loop) are in the request's trace.
 */
@SpringBootTest(classes = ObservationTracesReactiveTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "rate-limit.policies.search.capacity=1",
				"rate-limit.policies.search.refill=1/1h", "rate-limit.policies.search.key=ip",
				"rate-limit.concurrency.searches.permits=4", "rate-limit.routes[0].pattern=/api/**",
				"rate-limit.routes[0].policies=search", "rate-limit.routes[0].concurrency=searches" })
class ObservationTracesReactiveTests {

	@LocalServerPort
	int port;

	@Autowired
	RecordingObservationHandler handler;

	@Test
	void aRouteRulesDecisionsAreInTheRequestsObservation() {
		assertThat(status("/api/search")).isEqualTo(200);
		assertThat(status("/api/search")).isEqualTo(429);

		// The server stops a request's observation once the response is written: maybe after the client has it.
		List<Observation.Context> requests = await().atMost(Duration.ofSeconds(10))
			.until(this::serverRequests, (stopped) -> stopped.size() == 2);
		Observation.Context allowed = requests.stream()
			.filter((c) -> "allowed".equals(RecordingObservationHandler.value(c, "rate.limit.policy.search.outcome")))
			.findFirst()
			.orElseThrow();
		assertThat(RecordingObservationHandler.value(allowed, "rate.limit.policy.search.remaining")).isEqualTo("0");
		assertThat(RecordingObservationHandler.value(allowed, "rate.limit.concurrency.searches.outcome"))
			.isEqualTo("allowed");
		Observation.Context refused = requests.stream().filter((c) -> c != allowed).findFirst().orElseThrow();
		assertThat(this.handler.events(refused, ObservationLimitListener.DECISION_EVENT))
			.containsExactly("policy search denied, remaining 0 of 1");
	}

	private List<Observation.Context> serverRequests() {
		return this.handler.stopped().stream().filter((c) -> "http.server.requests".equals(c.getName())).toList();
	}

	private int status(String path) {
		return WebClient.create("http://localhost:" + this.port)
			.get()
			.uri(path)
			.exchangeToMono((response) -> response.releaseBody().thenReturn(response.statusCode().value()))
			.block(Duration.ofSeconds(10));
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfigurationWithoutSecurity
	@Import(RecordingObservationHandler.Registry.class)
	static class App {

		@Bean
		ManualTimeSource rateLimitTimeSource() {
			return new ManualTimeSource();
		}

		@Bean
		Endpoints endpoints() {
			return new Endpoints();
		}

	}

	@RestController
	static class Endpoints {

		@GetMapping("/api/search")
		Mono<Map<String, String>> search() {
			return Mono.just(Map.of("ok", "search"));
		}

	}

}
