package dev.ratelimit.sample;

import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.resilience.DenyCachingBackend;
import dev.ratelimit.support.RedisServerFixture;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static dev.ratelimit.sample.HttpContract.assertAllowed;
import static dev.ratelimit.sample.HttpContract.assertTooManyRequests;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample app over real HTTP, switched to the Redis backend with
 * {@code rate-limit.backend=redis} against a real redis-server the fixture
 * starts. Redis keeps time with its own clock here, so the refill rates are
 * slowed to one per hour to make the test independent of how fast it runs.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
class SampleApplicationRedisHttpTests {

	static final RedisServerFixture redis = RedisServerFixture.shared();

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		registry.add("rate-limit.backend", () -> "redis");
		redis.register(registry);
		registry.add("rate-limit.policies.agent-runs.plans.free.refill", () -> "5/5h");
		registry.add("rate-limit.policies.per-ip.refill", () -> "20/2h");
	}

	@LocalServerPort
	int port;

	@Autowired
	RateLimitBackend backend;

	TestHttp http;

	@BeforeEach
	void setUp() {
		this.http = TestHttp.on(this.port);
		redis.flushAll();
	}

	@Test
	void runsOnTheRedisBackend() {
		// The Redis backend, behind the deny cache that answers hammering clients locally.
		assertThat(this.backend).isInstanceOf(DenyCachingBackend.class);
	}

	@Test
	void agentRunAllowsABurstOfFiveThenAnswers429WithTheContract() throws Exception {
		for (int remaining = 4; remaining >= 0; remaining--) {
			Answer response = this.http.postJson("/agent/run", "{}", "X-User-Id", "alice");
			assertAllowed(response, "\"agent-runs\";q=5;w=18000",
					"\"agent-runs\";r=" + remaining + ";t=" + (5 - remaining) * 3600);
		}
		Answer denied = this.http.postJson("/agent/run", "{}", "X-User-Id", "alice");
		assertTooManyRequests(denied, "3600", List.of("agent-runs"), "/agent/run");
		assertThat(redis.call("EXISTS", "rl:agent-runs:{alice}")).isEqualTo(":1");
	}

	@Test
	void helloIsLimitedPerClientIpByTheRouteRule() throws Exception {
		for (int i = 0; i < 20; i++) {
			assertThat(this.http.get("/api/hello").status()).isEqualTo(200);
		}
		Answer denied = this.http.get("/api/hello");
		assertTooManyRequests(denied, "360", List.of("per-ip"), "/api/hello");
		HttpContract.assertRateLimitFields(denied, "\"per-ip\";q=20;w=7200", "\"per-ip\";r=0;t=7200");
	}

}
