package dev.ratelimit.web.reactive;

import java.security.Principal;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;
import dev.ratelimit.support.EnableAutoConfigurationWithoutSecurity;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A WebFlux application with the starter on the memory backend, over real
 * HTTP: a route rule is enforced by the reactive filter; an annotated method
 * returning {@code Mono} or {@code Flux} is decided when subscribed to, with
 * keys that read the request and header fields for the limits the caller may
 * see; a refusal answers the HTTP contract's 429 (or 503 for a limit the
 * caller may not see) with {@code Retry-After} and an RFC 9457 body, never a
 * 500.
 */
@SpringBootTest(classes = ReactiveWebTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "rate-limit.policies.per-ip.capacity=2",
				"rate-limit.policies.per-ip.refill=1/1h", "rate-limit.policies.per-ip.key=ip",
				"rate-limit.routes[0].pattern=/api/**", "rate-limit.routes[0].policies=per-ip",
				"rate-limit.policies.runs.capacity=3", "rate-limit.policies.runs.refill=1/1h",
				"rate-limit.policies.per-user.capacity=1", "rate-limit.policies.per-user.refill=1/1h",
				"rate-limit.policies.per-user.key=#user", "rate-limit.policies.per-tenant.capacity=2",
				"rate-limit.policies.per-tenant.refill=1/1h", "rate-limit.policies.per-tenant.key=header('X-Tenant-Id')",
				"rate-limit.policies.per-tenant.missing-key=reject", "rate-limit.policies.streams.capacity=1",
				"rate-limit.policies.streams.refill=1/1h", "rate-limit.policies.streams.key=header('X-Tenant-Id')",
				"rate-limit.policies.per-principal.capacity=1", "rate-limit.policies.per-principal.refill=1/1h",
				"rate-limit.policies.per-principal.key=principal", "rate-limit.routes[1].pattern=/me/**",
				"rate-limit.routes[1].policies=per-principal", "rate-limit.policies.per-caller.capacity=1",
				"rate-limit.policies.per-caller.refill=1/1h", "rate-limit.policies.per-caller.key=principal",
				"rate-limit.budgets.tenant-daily.amount=1.00", "rate-limit.budgets.tenant-daily.key=header('X-Tenant-Id')" })
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
	void anAnnotatedHandlerKeyedByTheCallerAnswersWithItsFieldsAndA429NamingIt() {
		WebClient client = client();
		var allowed = exchange(client, "/users/ann");
		assertThat(allowed.status()).isEqualTo(200);
		assertThat(allowed.rateLimit()).isEqualTo("\"per-user\";r=0;t=3600");
		assertThat(exchange(client, "/users/bob").status()).isEqualTo(200);
		var refused = exchange(client, "/users/ann");
		assertThat(refused.status()).isEqualTo(429);
		assertThat(refused.rateLimit()).isEqualTo("\"per-user\";r=0;t=3600");
		assertThat(refused.body()).contains("\"violated-policies\":[\"per-user\"]");
	}

	@Test
	void anAnnotationsKeyReadsTheRequest() {
		WebClient client = client();
		for (int i = 0; i < 2; i++) {
			assertThat(exchange(client, "/tenants", "X-Tenant-Id", "acme").status()).isEqualTo(200);
		}
		assertThat(exchange(client, "/tenants", "X-Tenant-Id", "acme").status()).isEqualTo(429);
		assertThat(exchange(client, "/tenants", "X-Tenant-Id", "globex").status()).isEqualTo(200);
		// No header, and the policy rejects a missing key: 400, not a 500.
		assertThat(exchange(client, "/tenants").status()).isEqualTo(400);
	}

	@Test
	void aFluxIsDecidedWhenSubscribedAndRefusedAsTheContractSays() {
		WebClient client = client();
		assertThat(exchange(client, "/stream", "X-Tenant-Id", "initech").body()).isEqualTo("abc");
		var refused = exchange(client, "/stream", "X-Tenant-Id", "initech");
		assertThat(refused.status()).isEqualTo(429);
		assertThat(refused.contentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
	}

	@Test
	void principalKeysReadTheRequestsPrincipalInRouteRulesAndAnnotations() {
		WebClient client = client();
		assertThat(exchange(client, "/me/profile", "X-Test-User", "ann").status()).isEqualTo(200);
		assertThat(exchange(client, "/me/profile", "X-Test-User", "ann").status()).isEqualTo(429);
		assertThat(exchange(client, "/me/profile", "X-Test-User", "bob").status()).isEqualTo(200);
		assertThat(exchange(client, "/callers", "X-Test-User", "ann").status()).isEqualTo(200);
		assertThat(exchange(client, "/callers", "X-Test-User", "ann").status()).isEqualTo(429);
		assertThat(exchange(client, "/callers", "X-Test-User", "bob").status()).isEqualTo(200);
	}

	@Test
	void aBudgetOnTheHandlerIsReservedWithItsFieldAndRefusedWhenSpent() {
		WebClient client = client();
		var allowed = exchange(client, "/chat", "X-Tenant-Id", "umbrella");
		assertThat(allowed.status()).isEqualTo(200);
		assertThat(allowed.budgetRemaining()).startsWith("\"tenant-daily\";w=\"day\";r=\"0.400000\";q=\"1.000000\"");
		var refused = exchange(client, "/chat", "X-Tenant-Id", "umbrella");
		assertThat(refused.status()).isEqualTo(429);
		assertThat(refused.body()).contains("\"violated-policies\":[\"tenant-daily\"]");
	}

	private WebClient client() {
		return WebClient.builder().baseUrl("http://localhost:" + this.port).build();
	}

	private static Answer exchange(WebClient client, String path, String... headers) {
		return client.get()
			.uri(path)
			.headers((fields) -> {
				for (int i = 0; i < headers.length; i += 2) {
					fields.set(headers[i], headers[i + 1]);
				}
			})
			.exchangeToMono((response) -> response.bodyToMono(String.class)
				.defaultIfEmpty("")
				.map((body) -> new Answer(response.statusCode().value(),
						response.headers().asHttpHeaders().getFirst("Content-Type"),
						response.headers().asHttpHeaders().getFirst("Retry-After"),
						response.headers().asHttpHeaders().getFirst("RateLimit"),
						response.headers().asHttpHeaders().getFirst("Budget-Remaining"), body)))
			.block(Duration.ofSeconds(10));
	}

	record Answer(int status, String contentType, String retryAfter, String rateLimit, String budgetRemaining,
			String body) {
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfigurationWithoutSecurity
	static class App {

		@Bean
		ManualTimeSource rateLimitTimeSource() {
			return new ManualTimeSource(1_767_225_600_000_000L);
		}

		@Bean
		Controller controller() {
			return new Controller();
		}

		/** Stands in for Spring Security: the principal named by a test header, kept in the pipeline. */
		@Bean
		WebFilter testPrincipal() {
			return new OrderedTestPrincipal();
		}

	}

	static class OrderedTestPrincipal implements WebFilter, Ordered {

		@Override
		public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
			String user = exchange.getRequest().getHeaders().getFirst("X-Test-User");
			if (user == null) {
				return chain.filter(exchange);
			}
			Principal principal = () -> user;
			return chain.filter(exchange.mutate().principal(Mono.just(principal)).build());
		}

		@Override
		public int getOrder() {
			return -100;
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

		@RateLimited("per-user")
		@GetMapping("/users/{user}")
		Mono<String> user(@PathVariable String user) {
			return Mono.just(user);
		}

		@RateLimited("per-tenant")
		@GetMapping("/tenants")
		Mono<String> tenant() {
			return Mono.just("tenant");
		}

		@GetMapping("/me/profile")
		Mono<String> profile() {
			return Mono.just("profile");
		}

		@RateLimited("per-caller")
		@GetMapping("/callers")
		Mono<String> caller() {
			return Mono.just("caller");
		}

		@CostBudget(value = "tenant-daily", estimate = "0.60")
		@GetMapping("/chat")
		Mono<String> chat() {
			return Mono.just("answer");
		}

		@RateLimited("streams")
		@GetMapping("/stream")
		Flux<String> stream() {
			return Flux.just("a", "b", "c");
		}

	}

}
