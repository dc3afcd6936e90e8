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
import org.springframework.security.config.Customizer;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;

import dev.ratelimit.RateLimited;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A WebFlux application secured by Spring Security, over real HTTP: a
 * {@code principal} key reads the authenticated user, a role exempts its
 * callers (the authority {@code ROLE_ADMIN} is the role {@code ADMIN}, as on a
 * servlet request), and an anonymous caller has no principal, whose key a
 * policy may reject, rather than sharing Spring Security's anonymous user.
 */
@SpringBootTest(classes = ReactiveSecurityTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "rate-limit.policies.per-caller.capacity=1",
				"rate-limit.policies.per-caller.refill=1/1h", "rate-limit.policies.per-caller.key=principal",
				"rate-limit.policies.per-caller.missing-key=reject", "rate-limit.policies.per-caller.exempt.roles=ADMIN",
				"rate-limit.routes[0].pattern=/api/**", "rate-limit.routes[0].policies=per-caller",
				"rate-limit.policies.reports.capacity=1", "rate-limit.policies.reports.refill=1/1h",
				"rate-limit.policies.reports.key=principal", "rate-limit.policies.reports.missing-key=reject",
				"rate-limit.policies.reports.exempt.roles=ROLE_ADMIN" })
class ReactiveSecurityTests {

	@LocalServerPort
	int port;

	@Test
	void aRouteRuleExemptsARoleAndLimitsEveryOtherPrincipal() {
		for (int i = 0; i < 3; i++) {
			assertThat(status("/api/hello", "ada")).isEqualTo(200);
		}
		assertThat(status("/api/hello", "bob")).isEqualTo(200);
		assertThat(status("/api/hello", "bob")).isEqualTo(429);
		assertThat(status("/api/hello", "cy")).isEqualTo(200);
	}

	@Test
	void anAnnotatedMethodExemptsARoleAndLimitsEveryOtherPrincipal() {
		for (int i = 0; i < 3; i++) {
			assertThat(status("/reports", "ada")).isEqualTo(200);
		}
		assertThat(status("/reports", "bob")).isEqualTo(200);
		assertThat(status("/reports", "bob")).isEqualTo(429);
	}

	@Test
	void anAnonymousCallerHasNoPrincipal() {
		// Not the shared key "anonymousUser": a policy that rejects a missing key answers 400.
		assertThat(status("/api/hello", null)).isEqualTo(400);
		assertThat(status("/reports", null)).isEqualTo(400);
	}

	private int status(String path, String user) {
		return WebClient.create("http://localhost:" + this.port)
			.get()
			.uri(path)
			.headers((headers) -> {
				if (user != null) {
					headers.setBasicAuth(user, "secret");
				}
			})
			.exchangeToMono((response) -> response.releaseBody().thenReturn(response.statusCode().value()))
			.block(Duration.ofSeconds(10));
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		ManualTimeSource rateLimitTimeSource() {
			return new ManualTimeSource(1_767_225_600_000_000L);
		}

		@Bean
		MapReactiveUserDetailsService users() {
			return new MapReactiveUserDetailsService(
					User.withUsername("ada").password("{noop}secret").roles("ADMIN").build(),
					User.withUsername("bob").password("{noop}secret").roles("USER").build(),
					User.withUsername("cy").password("{noop}secret").roles("USER").build());
		}

		@Bean
		SecurityWebFilterChain security(ServerHttpSecurity http) {
			return http.authorizeExchange((exchanges) -> exchanges.anyExchange().permitAll())
				.httpBasic(Customizer.withDefaults())
				.csrf(ServerHttpSecurity.CsrfSpec::disable)
				.build();
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

		@RateLimited("reports")
		@GetMapping("/reports")
		Mono<String> reports() {
			return Mono.just("report");
		}

	}

}
