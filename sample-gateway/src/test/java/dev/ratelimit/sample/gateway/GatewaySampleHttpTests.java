package dev.ratelimit.sample.gateway;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.ratelimit.core.TimeSource;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gateway sample as shipped (its {@code application.yml}, memory backend),
 * over real HTTP, in front of a real backend: the limited route admits its
 * capacity and then refuses with the HTTP contract, without proxying; the
 * plain route proxies everything; the comparison route is off without its
 * profile. The limiter's clock stands still, so the capacity is exactly the
 * policy's, however slow the machine.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
class GatewaySampleHttpTests {

	private static final Backend BACKEND = new Backend();

	@LocalServerPort
	int port;

	@DynamicPropertySource
	static void backend(DynamicPropertyRegistry registry) {
		registry.add("sample.gateway.backend-uri", BACKEND::uri);
	}

	@AfterAll
	static void stopBackend() {
		BACKEND.close();
	}

	@Test
	void theLimitedRouteAdmitsItsCapacityThenRefusesWithTheContract() {
		for (int remaining = 19; remaining >= 0; remaining--) {
			Answer allowed = get("/limited/api/hello");
			assertThat(allowed.status()).isEqualTo(200);
			assertThat(allowed.body()).isEqualTo("backend /api/hello");
			assertThat(allowed.header(Backend.REACHED)).isEqualTo("reached");
			assertThat(allowed.header("RateLimit-Policy")).isEqualTo("\"per-ip\";q=20;w=2");
			// t: whole seconds until the bucket is full again, at 10 tokens a second.
			int reset = (20 - remaining + 9) / 10;
			assertThat(allowed.header("RateLimit")).isEqualTo("\"per-ip\";r=" + remaining + ";t=" + reset);
		}
		int proxied = BACKEND.hits("/api/hello");
		Answer refused = get("/limited/api/hello");
		assertThat(refused.status()).isEqualTo(429);
		assertThat(refused.header(Backend.REACHED)).isNull();
		assertThat(refused.header("Content-Type")).isEqualTo("application/problem+json");
		// One token every 100 ms: the wait, rounded up to whole seconds.
		assertThat(refused.header("Retry-After")).isEqualTo("1");
		assertThat(refused.header("RateLimit")).isEqualTo("\"per-ip\";r=0;t=2");
		assertThat(refused.body()).contains("\"status\":429")
			.contains("\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\"")
			.contains("\"violated-policies\":[\"per-ip\"]");
		assertThat(BACKEND.hits("/api/hello")).as("refused requests proxied").isEqualTo(proxied);
	}

	@Test
	void thePlainRouteHasNoLimiter() {
		for (int i = 0; i < 30; i++) {
			Answer answer = get("/plain/api/plain");
			assertThat(answer.status()).isEqualTo(200);
			assertThat(answer.body()).isEqualTo("backend /api/plain");
			assertThat(answer.header("RateLimit")).isNull();
			assertThat(answer.header("RateLimit-Policy")).isNull();
		}
		assertThat(BACKEND.hits("/api/plain")).isEqualTo(30);
	}

	@Test
	void theGatewaysOwnRedisRateLimiterRouteIsOffWithoutTheCompareProfile() {
		assertThat(get("/redis-rate-limiter/api/compare").status()).isEqualTo(404);
		assertThat(BACKEND.hits("/api/compare")).isZero();
	}

	private Answer get(String path) {
		return TestHttp.on(this.port).get(path);
	}

	/** The limiter's clock, standing still. */
	@TestConfiguration(proxyBeanMethods = false)
	static class FrozenClock {

		@Bean
		TimeSource rateLimitTimeSource() {
			return () -> 1_767_225_600_000_000L;
		}

	}

}
