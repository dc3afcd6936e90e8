package dev.ratelimit.sample.gateway;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.ratelimit.support.RedisServerFixture;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gateway sample with its profile {@code compare}, over real HTTP, on a
 * real redis-server: the starter's {@code RateLimit} filter decides on Redis,
 * and the route {@code redis-rate-limiter} is on, limited by the gateway's own
 * {@code RedisRateLimiter} on the same Redis. Both read Redis' clock, so the
 * limits here refill slowly (the starter's one token an hour, the gateway's
 * one a second, its least) and each test looks for the refusal rather than
 * timing it. The store is empty before each test, and holds the limiter's
 * keys after it.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "rate-limit.policies.per-ip.capacity=2", "rate-limit.policies.per-ip.refill=1/1h",
				"sample.gateway.compare.replenish-rate=1", "sample.gateway.compare.burst-capacity=2" })
@ActiveProfiles("compare")
class GatewaySampleCompareTests {

	private static final RedisServerFixture REDIS = RedisServerFixture.shared();

	private static final Backend BACKEND = new Backend();

	@LocalServerPort
	int port;

	@DynamicPropertySource
	static void redisAndBackend(DynamicPropertyRegistry registry) {
		REDIS.register(registry);
		registry.add("sample.gateway.backend-uri", BACKEND::uri);
	}

	@AfterAll
	static void stopBackend() {
		BACKEND.close();
	}

	@BeforeEach
	void flush() {
		REDIS.flushAll();
	}

	@Test
	void theRateLimitFilterDecidesOnRedis() {
		for (int remaining = 1; remaining >= 0; remaining--) {
			Answer allowed = TestHttp.on(this.port).get("/limited/api/ours");
			assertThat(allowed.status()).isEqualTo(200);
			assertThat(allowed.header("RateLimit")).startsWith("\"per-ip\";r=" + remaining + ";");
		}
		Answer refused = TestHttp.on(this.port).get("/limited/api/ours");
		assertThat(refused.status()).isEqualTo(429);
		assertThat(refused.header("Content-Type")).isEqualTo("application/problem+json");
		assertThat(refused.header("Retry-After")).isNotNull();
		assertThat(refused.body()).contains("\"violated-policies\":[\"per-ip\"]");
		assertThat(BACKEND.hits("/api/ours")).isEqualTo(2);
		// The bucket is in Redis (the store was empty before the test), not in the gateway's memory.
		assertThat(REDIS.call("DBSIZE")).isEqualTo(":1");
	}

	@Test
	void theGatewaysOwnRedisRateLimiterLimitsItsRoute() {
		List<Answer> answers = new ArrayList<>();
		// A burst of 2 refilled at 1 a second: however slow the machine, 50 calls in a row meet a refusal.
		for (int i = 0; i < 50 && (answers.isEmpty() || answers.get(answers.size() - 1).status() == 200); i++) {
			answers.add(TestHttp.on(this.port).get("/redis-rate-limiter/api/theirs"));
		}
		Answer first = answers.get(0);
		assertThat(first.status()).isEqualTo(200);
		assertThat(first.body()).isEqualTo("backend /api/theirs");
		// The gateway's own header fields; -1 would mean that Redis failed and it admitted unchecked.
		assertThat(first.header("X-RateLimit-Remaining")).isEqualTo("1");
		assertThat(first.header("RateLimit")).isNull();
		Answer refused = answers.get(answers.size() - 1);
		assertThat(refused.status()).isEqualTo(429);
		assertThat(refused.header("X-RateLimit-Remaining")).isEqualTo("0");
		assertThat(refused.body()).isEmpty();
		assertThat(BACKEND.hits("/api/theirs")).isEqualTo(answers.size() - 1);
		REDIS.flushAll();
		assertThat(TestHttp.on(this.port).get("/redis-rate-limiter/api/theirs").status()).isEqualTo(200);
	}

}
