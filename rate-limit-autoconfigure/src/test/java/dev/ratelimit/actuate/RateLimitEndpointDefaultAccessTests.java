package dev.ratelimit.actuate;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The attack: with the common {@code exposure.include=*} and no security, a
 * caller over its limit resets itself through the endpoint. By default the
 * endpoint only reads, so the reset is refused and the limit holds.
 */
@SpringBootTest(classes = ActuatorTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT)
class RateLimitEndpointDefaultAccessTests {

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		ActuatorTestApplication.defaultAccessProperties(registry);
		registry.add("management.endpoints.web.exposure.include", () -> "*");
	}

	@LocalServerPort
	int port;

	private TestHttp http;

	@BeforeEach
	void client() {
		this.http = TestHttp.on(this.port);
	}

	@Test
	void aCallerOverItsLimitCannotResetItself() {
		for (int i = 0; i < 3; i++) {
			assertThat(this.http.get("/api/items", "X-User-Id", "mallory").status()).isEqualTo(200);
		}
		assertThat(this.http.get("/api/items", "X-User-Id", "mallory").status()).isEqualTo(429);

		Answer reset = this.http.delete("/actuator/ratelimits/per-user/mallory");

		assertThat(reset.status()).isEqualTo(405);
		assertThat(this.http.get("/api/items", "X-User-Id", "mallory").status()).isEqualTo(429);
		assertThat(this.http.get("/actuator/ratelimits/per-user/mallory").json().get("remaining").asLong()).isZero();
	}

	@Test
	void aCallerCannotRaiseItsLimitThroughAnOverride() {
		Answer override = this.http.postJson("/actuator/ratelimits/per-user",
				"{\"capacity\": 1000}");

		assertThat(override.status()).isEqualTo(405);
		assertThat(this.http.delete("/actuator/ratelimits/per-user").status()).isEqualTo(405);
		assertThat(this.http.get("/actuator/ratelimits/per-user").json().at("/effective/capacity").asLong())
			.isEqualTo(3);
	}

	@Test
	void readingStillWorks() {
		assertThat(this.http.get("/actuator/ratelimits").status()).isEqualTo(200);
		assertThat(this.http.get("/actuator/ratelimits/per-user/nobody").json().get("remaining").asLong())
			.isEqualTo(3);
	}

}
