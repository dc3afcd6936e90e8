package dev.ratelimit.sample;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.ratelimit.support.RedisServerFixture;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The benchmark's floor mode ({@code sample.benchmark.redis-incr-floor=true}
 * with the route rules removed) over real HTTP against a real redis-server:
 * each request to {@code /api/hello} is one INCR and no limiter decision.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "sample.benchmark.redis-incr-floor=true", "rate-limit.routes=" })
class RedisIncrFloorHttpTests {

	static final RedisServerFixture redis = RedisServerFixture.shared();

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		registry.add("rate-limit.backend", () -> "redis");
		redis.register(registry);
	}

	@LocalServerPort
	int port;

	TestHttp http;

	@BeforeEach
	void setUp() {
		this.http = TestHttp.on(this.port);
		redis.flushAll();
	}

	@Test
	void everyRequestIsOneIncrAndNoDecision() throws Exception {
		for (int i = 0; i < 30; i++) {
			Answer response = this.http.get("/api/hello");
			assertThat(response.status()).isEqualTo(200);
			// No route rule: the limiter neither decides nor writes its fields, past per-ip's burst of 20.
			assertThat(response.headers().firstValue("RateLimit-Policy")).isEmpty();
		}
		// INCRBY 0 reads the counter as an integer reply.
		assertThat(redis.call("INCRBY", "sample:incr-floor:{127.0.0.1}", "0")).isEqualTo(":30");
		assertThat(redis.call("EXISTS", "rl:per-ip:{127.0.0.1}")).isEqualTo(":0");
	}

	@Test
	void otherPathsPayNoIncr() throws Exception {
		assertThat(this.http.get("/actuator/health").status()).isEqualTo(200);
		assertThat(redis.call("EXISTS", "sample:incr-floor:{127.0.0.1}")).isEqualTo(":0");
	}

}
