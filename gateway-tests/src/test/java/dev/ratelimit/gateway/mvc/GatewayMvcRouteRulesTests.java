package dev.ratelimit.gateway.mvc;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.ratelimit.gateway.Backend;
import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Spring Cloud Gateway Server Web MVC (a servlet application) routing to a
 * real backend, limited by the starter's route rules on the gateway's paths:
 * the servlet filter decides before the gateway's handler proxies, so a
 * proxied 200 carries the RateLimit fields and a refusal is the HTTP
 * contract's 429, never proxied; the start-up check of route rules does not
 * take a rule on the gateway's routes for a typo. Runs in the module's
 * {@code gateway-server-webmvc} Surefire execution, without the WebFlux gateway.
 */
@SpringBootTest(classes = GatewayMvcRouteRulesTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=servlet", "rate-limit.policies.per-client.capacity=2",
				"rate-limit.policies.per-client.refill=1/1h", "rate-limit.policies.per-client.key=ip",
				"rate-limit.routes[0].pattern=/orders/**", "rate-limit.routes[0].policies=per-client" })
@ExtendWith(OutputCaptureExtension.class)
class GatewayMvcRouteRulesTests {

	@LocalServerPort
	int port;

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		String routes = "spring.cloud.gateway.server.webmvc.routes";
		registry.add(routes + "[0].id", () -> "orders");
		registry.add(routes + "[0].uri", () -> Backend.shared().uri());
		registry.add(routes + "[0].predicates[0]", () -> "Path=/orders/**");
		registry.add(routes + "[1].id", () -> "catalog");
		registry.add(routes + "[1].uri", () -> Backend.shared().uri());
		registry.add(routes + "[1].predicates[0]", () -> "Path=/catalog/**");
	}

	@Test
	void aRouteRuleLimitsTheGatewaysRouteWithTheContract() {
		for (int remaining = 1; remaining >= 0; remaining--) {
			Answer proxied = TestHttp.on(this.port).get("/orders/42");
			assertThat(proxied.status()).isEqualTo(200);
			assertThat(proxied.body()).isEqualTo("backend /orders/42");
			assertThat(proxied.header(Backend.REACHED)).isEqualTo("reached");
			assertThat(proxied.header("RateLimit-Policy")).isEqualTo("\"per-client\";q=2;w=7200");
			assertThat(proxied.header("RateLimit")).startsWith("\"per-client\";r=" + remaining + ";t=");
		}
		int reached = Backend.shared().hits("/orders/42");
		Answer refused = TestHttp.on(this.port).get("/orders/42");
		assertThat(refused.status()).isEqualTo(429);
		assertThat(refused.header(Backend.REACHED)).isNull();
		assertThat(Backend.shared().hits("/orders/42")).isEqualTo(reached);
		assertThat(refused.header("Retry-After")).isEqualTo("3600");
		assertThat(refused.header("Cache-Control")).isEqualTo("no-store");
		assertThat(refused.header("Content-Type")).startsWith("application/problem+json");
		assertThat(refused.header("RateLimit")).isEqualTo("\"per-client\";r=0;t=7200");
		assertThat(refused.body())
			.contains("\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\"")
			.contains("\"status\":429")
			.contains("\"instance\":\"/orders/42\"")
			.contains("\"violated-policies\":[\"per-client\"]");
	}

	@Test
	void aRouteNoRuleMatchesIsProxiedWithoutFields() {
		for (int i = 0; i < 3; i++) {
			Answer proxied = TestHttp.on(this.port).get("/catalog/items");
			assertThat(proxied.status()).isEqualTo(200);
			assertThat(proxied.header(Backend.REACHED)).isEqualTo("reached");
			assertThat(proxied.header("RateLimit")).isNull();
		}
	}

	@Test
	void aRuleOnTheGatewaysRoutesIsNotTakenForATypo(CapturedOutput output) {
		// The gateway's routes are router functions, whose paths the start-up check cannot read: no warning.
		assertThat(output.getAll()).contains("rate-limit.routes[0] (/orders/**) matches no @RequestMapping")
			.doesNotContain("matches no request mapping of the application");
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

		/** A clock that stands still while the test runs, however slowly: the numbers are exact. */
		@Bean
		ManualTimeSource rateLimitTimeSource() {
			return new ManualTimeSource();
		}

	}

}
