package dev.ratelimit.web.reactive;

import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import dev.ratelimit.RateLimited;
import dev.ratelimit.support.EnableAutoConfigurationWithoutSecurity;
import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An ordinary WebFlux handler method, one that returns a plain value, is
 * limited per caller as on the servlet side: its key reads the request
 * (a header, a path variable, with its arguments read from the body too),
 * successes carry the fields, a caller over its limit gets 429 naming it, and
 * another caller is not affected; a limit the caller may not see answers 503.
 */
@SpringBootTest(classes = PlainHandlerMethodTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "rate-limit.policies.runs.capacity=3",
				"rate-limit.policies.runs.refill=1/1h", "rate-limit.policies.runs.key=header('X-User-Id')",
				"rate-limit.policies.posts.capacity=1", "rate-limit.policies.posts.refill=1/1h",
				"rate-limit.policies.posts.key=header('X-User-Id')", "rate-limit.policies.per-item.capacity=1",
				"rate-limit.policies.per-item.refill=1/1h", "rate-limit.policies.per-item.key=#id",
				"rate-limit.policies.shared.capacity=1", "rate-limit.policies.shared.refill=1/1h",
				"rate-limit.policies.shared.key=global" })
class PlainHandlerMethodTests {

	@LocalServerPort
	int port;

	@Test
	void eachCallerHasItsOwnBucketAndTheContractsAnswers() {
		TestHttp http = TestHttp.on(this.port);
		for (int remaining = 2; remaining >= 0; remaining--) {
			Answer allowed = http.get("/plain", "X-User-Id", "a1");
			assertThat(allowed.status()).isEqualTo(200);
			assertThat(allowed.body()).isEqualTo("plain");
			assertThat(allowed.rateLimitPolicy()).isEqualTo("\"runs\";q=3;w=10800");
			assertThat(allowed.rateLimit()).startsWith("\"runs\";r=" + remaining + ";t=");
		}
		for (String user : new String[] { "b2", "c3", "d4" }) {
			assertThat(http.get("/plain", "X-User-Id", user).status()).as(user).isEqualTo(200);
		}
		Answer refused = http.get("/plain", "X-User-Id", "a1");
		assertThat(refused.status()).isEqualTo(429);
		assertThat(refused.retryAfter()).isEqualTo("3600");
		assertThat(refused.rateLimit()).startsWith("\"runs\";r=0;t=");
		assertThat(refused.contentType()).startsWith("application/problem+json");
		assertThat(refused.body()).contains("\"violated-policies\":[\"runs\"]").contains("\"instance\":\"/plain\"");
	}

	@Test
	void aMethodWhoseArgumentIsReadFromTheBodyIsLimitedPerCallerToo() {
		TestHttp http = TestHttp.on(this.port);
		String json = "{\"text\":\"hi\"}";
		assertThat(http.post("/posted", json, "X-User-Id", "ann", "Content-Type", "application/json").status())
			.isEqualTo(200);
		assertThat(http.post("/posted", json, "X-User-Id", "bob", "Content-Type", "application/json").status())
			.isEqualTo(200);
		Answer refused = http.post("/posted", json, "X-User-Id", "ann", "Content-Type", "application/json");
		assertThat(refused.status()).isEqualTo(429);
		assertThat(refused.body()).contains("\"violated-policies\":[\"posts\"]");
	}

	@Test
	void aKeyReadFromTheMethodsArgumentsLimitsPerValue() {
		TestHttp http = TestHttp.on(this.port);
		assertThat(http.get("/items/1").status()).isEqualTo(200);
		assertThat(http.get("/items/2").status()).isEqualTo(200);
		assertThat(http.get("/items/1").status()).isEqualTo(429);
	}

	@Test
	void aLimitTheCallerMayNotSeeAnswers503AsOnTheServletSide() {
		TestHttp http = TestHttp.on(this.port);
		assertThat(http.get("/capacity").status()).isEqualTo(200);
		Answer refused = http.get("/capacity");
		assertThat(refused.status()).isEqualTo(503);
		assertThat(refused.body()).contains("temporary-reduced-capacity").doesNotContain("policies");
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

	}

	@RestController
	static class Controller {

		@RateLimited("runs")
		@GetMapping("/plain")
		public String plain() {
			return "plain";
		}

		@RateLimited("posts")
		@PostMapping("/posted")
		public String posted(@RequestBody Map<String, String> body) {
			return body.get("text");
		}

		@RateLimited("per-item")
		@GetMapping("/items/{id}")
		public String item(@PathVariable String id) {
			return id;
		}

		@RateLimited("shared")
		@GetMapping("/capacity")
		public String shared() {
			return "shared";
		}

	}

}
