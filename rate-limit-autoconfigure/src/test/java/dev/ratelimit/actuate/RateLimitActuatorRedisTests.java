package dev.ratelimit.actuate;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Arrays;
import javax.management.MBeanException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.redis.RedisLimiterConnection;
import dev.ratelimit.redis.RedisSilence;
import dev.ratelimit.support.RedisServerFixture;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The {@code rateLimit} health contributor and the {@code ratelimits} endpoint
 * on the Redis backend, over real HTTP, against a redis-server of this class's
 * own that the tests kill.
 */
@SpringBootTest(classes = ActuatorTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT)
class RateLimitActuatorRedisTests {

	static final RedisServerFixture redis = RedisServerFixture.start();

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		ActuatorTestApplication.properties(registry);
		redis.register(registry);
		registry.add("rate-limit.backend", () -> "redis");
		registry.add("rate-limit.redis.timeout", () -> "300ms");
		registry.add("spring.jmx.enabled", () -> "true");
		registry.add("management.endpoints.jmx.exposure.include", () -> "ratelimits");
		registry.add("management.endpoints.jmx.domain", () -> JMX_DOMAIN);
	}

	private static final String JMX_DOMAIN = "dev.ratelimit.redis-tests";

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@LocalServerPort
	int port;

	@Autowired
	RateLimitBackend backend;

	@Autowired
	RedisLimiterConnection connection;

	private RedisSilence silence;

	private TestHttp http;

	@BeforeEach
	void healthyRedis() {
		this.http = TestHttp.on(this.port);
		this.silence = this.connection.silence();
		if (!redis.process().isAlive()) {
			redis.restart();
		}
		redis.flushAll();
	}

	@Test
	void healthIsUpWhileRedisAnswersDownOnceItIsKilledAndUpAgainAfterItReturns() {
		Answer up = this.http.get("/actuator/health/rateLimit");
		assertThat(up.status()).isEqualTo(200);
		assertThat(up.json().get("status").asString()).isEqualTo("UP");
		assertThat(up.json().at("/details/backend").asString()).isEqualTo("redis");
		assertThat(up.json().at("/details/redis").asString()).isEqualTo("available");

		redis.kill();
		Answer down = this.http.get("/actuator/health/rateLimit");
		assertThat(down.status()).isEqualTo(503);
		assertThat(down.json().get("status").asString()).isEqualTo("DOWN");
		assertThat(down.json().at("/details/backend").asString()).isEqualTo("redis");
		assertThat(down.json().at("/details/error").asString()).isNotEmpty();
		// Down because a budget fails closed (the default for budgets): its calls are refused now.
		assertThat(down.json().at("/details/failClosed/budgets/0").asString()).isEqualTo("tenant-daily");
		assertThat(this.http.get("/actuator/health").json().get("status").asString()).isEqualTo("DOWN");
		// Not in the probe groups unless the user puts it there: no restart, no removal from the load balancer.
		assertThat(this.http.get("/actuator/health/liveness").status()).isEqualTo(200);
		assertThat(this.http.get("/actuator/health/readiness").status()).isEqualTo(200);

		redis.restart();
		// The limiter's connection reconnects by itself, with a backoff.
		await().atMost(Duration.ofSeconds(30))
			.until(() -> this.http.get("/actuator/health/rateLimit").status() == 200);
	}

	@Test
	void healthIsDownWhileRedisAnswersPingButRefusesTheLimitersCalls() {
		// An ACL that takes the scripts away: PING answers, every decision is refused.
		assertThat(redis.call("ACL", "SETUSER", "default", "-evalsha", "-eval", "-fcall")).isEqualTo("+OK");
		try {
			assertThat(this.http.post("/chat", null, "X-Tenant-Id", "acl").status()).as("fail-closed budget")
				.isEqualTo(503);
			assertThat(this.http.get("/api/items", "X-User-Id", "acl").status()).as("policy failing local")
				.isEqualTo(200);

			Answer down = this.http.get("/actuator/health/rateLimit");
			assertThat(down.status()).isEqualTo(503);
			JsonNode details = down.json().get("details");
			assertThat(details.get("redis").asString()).isEqualTo("unavailable");
			assertThat(details.get("error").asString()).contains("answers PING");
			assertThat(details.at("/failingCalls/budgets").asString()).contains("NOPERM");
			assertThat(details.at("/failingCalls/rateLimits").asString()).contains("NOPERM");
			assertThat(details.at("/failClosed/budgets/0").asString()).isEqualTo("tenant-daily");
		}
		finally {
			redis.call("ACL", "SETUSER", "default", "+@all");
		}
		assertThat(this.http.post("/chat", null, "X-Tenant-Id", "acl").status()).isEqualTo(200);
		assertThat(this.http.get("/api/items", "X-User-Id", "acl").status()).isEqualTo(200);

		Answer up = this.http.get("/actuator/health/rateLimit");
		assertThat(up.status()).isEqualTo(200);
		assertThat(up.json().at("/details/redis").asString()).isEqualTo("available");
		assertThat(up.json().at("/details/scripts").asString()).isEqualTo("FCALL");
	}

	@Test
	void overridesAnswer503WithTheReasonAndChangeNothingWhileRedisIsDown() {
		// After a restart by an earlier test, once the limiter's connection is back.
		await().atMost(Duration.ofSeconds(30))
			.until(() -> this.http.postJson("/actuator/ratelimits/per-user", "{\"capacity\": 2}").status() == 200);
		redis.kill();

		Answer set = this.http.postJson("/actuator/ratelimits/per-user", "{\"capacity\": 1}");
		assertThat(set.status()).as(set.body()).isEqualTo(503);
		assertThat(set.json().get("message").asString())
			.contains("store did not take the override {capacity=1} of rate-limit 'per-user'")
			.contains("nothing changed");
		Answer removed = this.http.delete("/actuator/ratelimits/per-user");
		assertThat(removed.status()).as(removed.body()).isEqualTo(503);
		assertThat(removed.json().get("message").asString()).contains("store did not take the removal");

		JsonNode overrides = this.http.get("/actuator/ratelimits/per-user").json();
		assertThat(overrides.at("/overrides/(limit)/capacity").asLong()).isEqualTo(2);
		assertThat(overrides.at("/effective/capacity").asLong()).isEqualTo(2);

		redis.restart();
		// The restarted server lost the store; this removal, once the connection is back, or a poll clears it.
		await().atMost(Duration.ofSeconds(30)).until(() -> {
			this.http.delete("/actuator/ratelimits/per-user");
			return this.http.get("/actuator/ratelimits/per-user").json().get("overrides").isEmpty();
		});
	}

	@Test
	void aKeyWhoseStoreCannotBeReadAnswers503WithWhyNever500() {
		await().atMost(Duration.ofSeconds(30))
			.until(() -> this.http.get("/actuator/ratelimits/per-user/ann").status() == 200);
		redis.kill();

		Answer rateLimit = this.http.get("/actuator/ratelimits/per-user/ann");
		assertThat(rateLimit.status()).as(rateLimit.body()).isEqualTo(503);
		assertThat(rateLimit.json().get("policy").asString()).isEqualTo("per-user");
		assertThat(rateLimit.json().get("key").asString()).isEqualTo("ann");
		assertThat(rateLimit.json().get("unavailable").asString()).startsWith("The store could not be read: ");
		Answer budget = this.http.get("/actuator/ratelimits/tenant-daily/acme");
		assertThat(budget.status()).as(budget.body()).isEqualTo(503);
		assertThat(budget.json().get("type").asString()).isEqualTo("budget");
		// An unknown limit is still a 404, Redis or not.
		assertThat(this.http.get("/actuator/ratelimits/nobody/ann").status()).isEqualTo(404);
		Answer reset = this.http.delete("/actuator/ratelimits/per-user/ann");
		assertThat(reset.status()).as(reset.body()).isEqualTo(503);
		assertThat(reset.json().get("message").asString()).startsWith("The store could not reset key 'ann'");

		redis.restart();
		// The next test finds decisions on Redis again.
		await().atMost(Duration.ofSeconds(30))
			.until(() -> this.http.get("/actuator/ratelimits/per-user/ann").status() == 200);
	}

	@Test
	void overridesOverJmxReportTheStoreOutageWithTheSameReason() throws Exception {
		redis.kill();
		ObjectName name = new ObjectName(JMX_DOMAIN + ":type=Endpoint,name=Ratelimits");
		MBeanServer server = ManagementFactory.getPlatformMBeanServer();
		String[] signature = new String[7];
		Arrays.fill(signature, String.class.getName());

		assertThatExceptionOfType(MBeanException.class)
			.isThrownBy(() -> server.invoke(name, "override",
					new Object[] { "per-user", null, "1", null, null, null, null }, signature))
			.withMessageContaining("store did not take the override {capacity=1} of rate-limit 'per-user'");
		assertThat(this.http.get("/actuator/ratelimits/per-user").json().get("overrides").isEmpty()).isTrue();
	}

	@Test
	void healthReportsASilentRedisWithoutWaitingForItAndRecoversWithIt() {
		// After a restart by an earlier test, once the limiter's connection is back.
		await().atMost(Duration.ofSeconds(30)).until(() -> this.http.get("/actuator/health/rateLimit").status() == 200);
		redis.pause();
		try {
			// The first call waits for the silence to last the timeout; then Redis is silent.
			assertThat(this.http.get("/api/items", "X-User-Id", "dan").status()).isEqualTo(200);
			await().atMost(Duration.ofSeconds(10)).until(this.silence::isSilent);
			Answer health = this.http.get("/actuator/health/rateLimit");
			JsonNode details = health.json().get("details");
			assertThat(details.get("redis").asString()).isEqualTo("unavailable");
			assertThat(details.get("error").asString()).startsWith("Redis has not answered the rate limiter");
			assertThat(details.at("/failClosed/budgets/0").asString()).isEqualTo("tenant-daily");
		}
		finally {
			redis.resume();
		}
		// The probe kept in flight is answered as soon as Redis runs again.
		await().atMost(Duration.ofSeconds(10)).until(() -> !this.silence.isSilent());
		assertThat(this.http.get("/actuator/health/rateLimit").json().at("/details/redis").asString())
			.isEqualTo("available");
	}

	@Test
	void keyStateIsReadFromRedisWithoutTakingAndDeleteRemovesTheKey() {
		this.http.get("/api/items", "X-User-Id", "eve");
		this.http.get("/api/items", "X-User-Id", "eve");
		this.http.get("/api/items", "X-User-Id", "eve");
		assertThat(this.http.get("/api/items", "X-User-Id", "eve").status()).isEqualTo(429);
		JsonNode state = this.http.get("/actuator/ratelimits/per-user/eve").json();
		assertThat(state.get("remaining").asLong()).isZero();
		assertThat(state.get("limit").asLong()).isEqualTo(3);
		assertThat(this.http.get("/actuator/ratelimits/per-user/eve").json().get("remaining").asLong()).isZero();
		assertThat(redis.call("EXISTS", "rl:per-user:{eve}")).isEqualTo(":1");

		assertThat(this.http.delete("/actuator/ratelimits/per-user/eve").status()).isEqualTo(200);
		assertThat(redis.call("EXISTS", "rl:per-user:{eve}")).isEqualTo(":0");
		Answer next = this.http.get("/api/items", "X-User-Id", "eve");
		assertThat(next.status()).isEqualTo(200);
		assertThat(next.rateLimit()).startsWith("\"per-user\";r=2;");
	}

	@Test
	void budgetResetDeletesItsThreeRedisKeys() {
		assertThat(this.http.post("/chat", null, "X-Tenant-Id", "acme").status()).isEqualTo(200);
		String base = "rl:budget:tenant-daily:{acme}";
		// The spend and the settled id's marker; the lease went with the settle.
		assertThat(redis.call("EXISTS", base, base + ":d")).isEqualTo(":2");
		JsonNode day = this.http.get("/actuator/ratelimits/tenant-daily/acme").json().at("/windows/0");
		assertThat(day.get("spent").decimalValue()).isEqualByComparingTo("0.25");
		assertThat(day.get("remaining").decimalValue()).isEqualByComparingTo("0.75");

		assertThat(this.http.delete("/actuator/ratelimits/tenant-daily/acme").status()).isEqualTo(200);
		assertThat(redis.call("EXISTS", base, base + ":l", base + ":d")).isEqualTo(":0");
		JsonNode afterReset = this.http.get("/actuator/ratelimits/tenant-daily/acme").json().at("/windows/0");
		assertThat(afterReset.get("remaining").decimalValue()).isEqualByComparingTo("1");
	}

}
