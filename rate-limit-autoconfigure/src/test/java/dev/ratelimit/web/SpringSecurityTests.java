package dev.ratelimit.web;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.RateLimited;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With Spring Security's default filter chain on, over real HTTP: the route
 * filter runs after it, so {@code principal} keys see the authenticated user in
 * route rules as in annotations.
 */
@SpringBootTest(classes = SpringSecurityTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.autoconfigure.exclude=", "spring.security.user.name=alice",
				"spring.security.user.password=secret", "rate-limit.policies.per-user.capacity=2",
				"rate-limit.policies.per-user.refill=2/1h", "rate-limit.policies.per-user.key=principal",
				"rate-limit.policies.per-user.missing-key=reject", "rate-limit.routes[0].pattern=/routed",
				"rate-limit.routes[0].policies=per-user" })
class SpringSecurityTests {

	@LocalServerPort
	int port;

	@Test
	void routeRuleKeyedByPrincipalSeesTheAuthenticatedUser() throws Exception {
		Answer first = get("/routed", "alice", "secret");
		assertThat(first.status()).isEqualTo(200);
		assertThat(first.headers().firstValue("RateLimit")).hasValue("\"per-user\";r=1;t=1800");
		assertThat(get("/routed", "alice", "secret").status()).isEqualTo(200);
		assertThat(get("/routed", "alice", "secret").status()).isEqualTo(429);
	}

	@Test
	void annotationKeyedByPrincipalSeesTheAuthenticatedUser() throws Exception {
		Answer response = get("/annotated", "alice", "secret");
		assertThat(response.status()).isEqualTo(200);
		assertThat(response.headers().firstValue("RateLimit")).hasValue("\"me\";r=0;t=3600");
		assertThat(get("/annotated", "alice", "secret").status()).isEqualTo(429);
	}

	@Test
	void unauthenticatedRequestsAreStoppedBySecurityBeforeTheLimiter() throws Exception {
		Answer response = get("/routed", null, null);
		assertThat(response.status()).isEqualTo(401);
		assertThat(response.headers().firstValue("RateLimit")).isEmpty();
	}

	private Answer get(String path, String user, String password) {
		if (user == null) {
			return TestHttp.on(this.port).get(path);
		}
		String token = Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
		return TestHttp.on(this.port).get(path, "Authorization", "Basic " + token);
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@RestController
		static class Endpoints {

			@GetMapping("/routed")
			Map<String, String> routed() {
				return Map.of("ok", "routed");
			}

			@RateLimited(policy = "me", capacity = "1", refill = "1/1h", key = "principal")
			@GetMapping("/annotated")
			Map<String, String> annotated() {
				return Map.of("ok", "annotated");
			}

		}

	}

}
