package dev.ratelimit.web.reactive;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;

import dev.ratelimit.RateLimited;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A WebFlux application with the starter on the memory backend, over real
 * HTTP: a route rule is enforced by the reactive filter, and a refusal, by a
 * route rule or by an annotated method returning {@code Mono}, answers the
 * HTTP contract's 429 (or 503 for a limit the caller may not see) with
 * {@code Retry-After} and an RFC 9457 body, never a 500.
 */
@SpringBootTest(classes = ReactiveWebTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "rate-limit.policies.per-ip.capacity=2",
				"rate-limit.policies.per-ip.refill=1/1h", "rate-limit.policies.per-ip.key=ip",
				"rate-limit.routes[0].pattern=/api/**", "rate-limit.routes[0].policies=per-ip",
				"rate-limit.policies.runs.capacity=3", "rate-limit.policies.runs.refill=1/1h",
				"rate-limit.policies.per-user.capacity=1", "rate-limit.policies.per-user.refill=1/1h",
				"rate-limit.policies.per-user.key=#user" })
class ReactiveWebTests {

	@LocalServerPort
	int port;

	@Test
	void aRouteRuleIsEnforcedWithTheContractsFieldsAndBody() {
		WebClient client = client();
		for (int remaining = 1; remaining >= 0; remaining--) {
			var response = client.get().uri("/api/hello").retrieve().toEntity(String.class).block();
			assertThat(response.getStatusCode()).isEqualTo(HttpStatus.OK);
			assertThat(response.getHeaders().getFirst("RateLimit-Policy")).isEqualTo("\"per-ip\";q=2;w=7200");
			assertThat(response.getHeaders().getFirst("RateLimit")).startsWith("\"per-ip\";r=" + remaining + ";t=");
		}
		var refused = exchange(client, "/api/hello");
		assertThat(refused.status()).isEqualTo(429);
		assertThat(refused.contentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
		assertThat(refused.retryAfter()).isEqualTo("3600");
		assertThat(refused.rateLimit()).isEqualTo("\"per-ip\";r=0;t=7200");
		assertThat(refused.body()).contains("\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\"")
			.contains("\"status\":429")
			.contains("\"instance\":\"/api/hello\"")
			.contains("\"violated-policies\":[\"per-ip\"]");
	}

	@Test
	void anAnnotatedMonoMethodOverItsGlobalLimitAnswers503NamingNothingNot500() {
		WebClient client = client();
		for (int i = 0; i < 3; i++) {
			assertThat(exchange(client, "/runs").status()).isEqualTo(200);
		}
		// A limit keyed global protects the service's capacity, not the caller's quota: 503, as on servlet.
		var refused = exchange(client, "/runs");
		assertThat(refused.status()).isEqualTo(503);
		assertThat(refused.contentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
		assertThat(refused.retryAfter()).isEqualTo("3600");
		assertThat(refused.body())
			.contains("\"type\":\"https://iana.org/assignments/http-problem-types#temporary-reduced-capacity\"")
			.contains("\"instance\":\"/runs\"")
			.doesNotContain("policies");
	}

	@Test
	void anAnnotatedMethodKeyedByItsArgumentsIsRefusedNotFailed() {
		WebClient client = client();
		assertThat(exchange(client, "/users/ann").status()).isEqualTo(200);
		assertThat(exchange(client, "/users/bob").status()).isEqualTo(200);
		// The servlet side answers 429 naming the limit (the handler's own, keyed by the caller); the reactive
		// aspect does not see the exchange yet, so it cannot register the limit as disclosed: 503 naming nothing.
		assertThat(exchange(client, "/users/ann").status()).isIn(429, 503);
	}

	private WebClient client() {
		return WebClient.builder().baseUrl("http://localhost:" + this.port).build();
	}

	private static Answer exchange(WebClient client, String path) {
		return client.get()
			.uri(path)
			.exchangeToMono((response) -> response.bodyToMono(String.class)
				.defaultIfEmpty("")
				.map((body) -> new Answer(response.statusCode().value(),
						response.headers().asHttpHeaders().getFirst("Content-Type"),
						response.headers().asHttpHeaders().getFirst("Retry-After"),
						response.headers().asHttpHeaders().getFirst("RateLimit"), body)))
			.block(Duration.ofSeconds(10));
	}

	record Answer(int status, String contentType, String retryAfter, String rateLimit, String body) {
	}

	@Configuration(proxyBeanMethods = false)
	// Spring Security is on the test classpath; this application has none.
	@EnableAutoConfiguration(excludeName = {
			"org.springframework.boot.security.autoconfigure.web.reactive.ReactiveWebSecurityAutoConfiguration",
			"org.springframework.boot.security.autoconfigure.ReactiveUserDetailsServiceAutoConfiguration",
			"org.springframework.boot.security.autoconfigure.actuate.web.reactive.ReactiveManagementWebSecurityAutoConfiguration" })
	static class App {

		@Bean
		ManualTimeSource rateLimitTimeSource() {
			return new ManualTimeSource(1_767_225_600_000_000L);
		}

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

		@RateLimited("runs")
		@GetMapping("/runs")
		Mono<String> runs() {
			return Mono.just("queued");
		}

		@RateLimited(policy = "per-user")
		@GetMapping("/users/{user}")
		Mono<String> user(@org.springframework.web.bind.annotation.PathVariable String user) {
			return Mono.just(user);
		}

	}

}
