package dev.ratelimit.actuate;

import java.time.Duration;

import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import dev.ratelimit.support.RedisServerFixture;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code GET /actuator/ratelimits/{policy}/top} as an operator reads it during
 * an incident: who is refused most and who consumes most, with each key's
 * state, on one instance and across two sharing one redis-server.
 */
class TopKeysEndpointTests {

	private static final RedisServerFixture redis = RedisServerFixture.start();

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@Test
	void theNoisyCallerIsListedFirstWithItsStateNow() {
		try (ConfigurableApplicationContext app = start("rate-limit.backend=memory")) {
			TestHttp client = TestHttp.of(app);
			calls(client, "alice", 10);
			calls(client, "bob", 2);
			calls(client, "tab\tand space", 1);
			JsonNode top = client.get("/actuator/ratelimits/per-user/top").json();
			assertThat(top.get("counted").asString()).isEqualTo("this instance");
			assertThat(top.get("instances").asInt()).isEqualTo(1);
			assertThat(top.get("window").asString()).isEqualTo("PT1M");
			JsonNode refused = top.get("byRefusals");
			assertThat(refused).hasSize(1);
			assertThat(refused.get(0).get("key").asString()).isEqualTo("alice");
			assertThat(refused.get(0).get("refusals").asLong()).isEqualTo(7);
			assertThat(refused.get(0).get("units").asLong()).isEqualTo(3);
			assertThat(refused.get(0).at("/state/remaining").asLong()).isZero();
			JsonNode used = top.get("byUnits");
			assertThat(used).extracting((node) -> node.get("key").asString())
				.containsExactly("alice", "bob", "tab\tand space");
			assertThat(used.get(2).at("/state/remaining").asLong()).isEqualTo(2);
		}
	}

	@Test
	void keysCanBeListedAsHashesAndABudgetsUnitsAreInItsUnit() {
		try (ConfigurableApplicationContext app = start("rate-limit.backend=memory",
				"rate-limit.heavy-hitters.hash-keys=true")) {
			TestHttp client = TestHttp.of(app);
			calls(client, "alice", 4);
			JsonNode top = client.get("/actuator/ratelimits/per-user/top").json();
			assertThat(top.get("keysHashed").asBoolean()).isTrue();
			assertThat(top.at("/byRefusals/0/key").asString()).isEqualTo(TopKeysReport.hashed("alice"))
				.startsWith("sha256:")
				.hasSize(23);
			assertThat(top.toString()).doesNotContain("alice");
			for (int i = 0; i < 3; i++) {
				assertThat(client.post("/chat", null, "X-Tenant-Id", "acme").status()).isEqualTo(200);
			}
			JsonNode budget = client.get("/actuator/ratelimits/tenant-daily/top").json();
			assertThat(budget.get("type").asString()).isEqualTo("budget");
			assertThat(budget.at("/byUnits/0/units").decimalValue()).isEqualByComparingTo("0.30");
		}
	}

	@Test
	void anUnknownLimitIsNotFoundAndTurnedOffHeavyHittersSaySo() {
		try (ConfigurableApplicationContext app = start("rate-limit.backend=memory")) {
			assertThat(TestHttp.of(app).get("/actuator/ratelimits/nothing/top").status()).isEqualTo(404);
		}
		try (ConfigurableApplicationContext app = start("rate-limit.backend=memory",
				"rate-limit.heavy-hitters.enabled=false")) {
			Answer response = TestHttp.of(app).get("/actuator/ratelimits/per-user/top");
			assertThat(response.status()).isEqualTo(400);
			assertThat(response.body()).contains("rate-limit.heavy-hitters.enabled");
		}
	}

	@Test
	void onRedisTheListCoversEveryInstance() {
		redis.flushAll();
		try (ConfigurableApplicationContext a = start(redisBackend()); ConfigurableApplicationContext b = start(
				redisBackend())) {
			TestHttp onA = TestHttp.of(a);
			TestHttp onB = TestHttp.of(b);
			// The same limit across the fleet: alice is refused on both instances, carol only on B.
			calls(onA, "alice", 5);
			calls(onB, "alice", 3);
			calls(onB, "carol", 6);
			Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
				JsonNode top = onA.get("/actuator/ratelimits/per-user/top").json();
				assertThat(top.get("instances").asInt()).isEqualTo(2);
				assertThat(top.get("counted").asString()).isEqualTo("every instance sharing the backend");
				JsonNode refused = top.get("byRefusals");
				assertThat(refused).extracting((node) -> node.get("key").asString()).containsExactly("alice", "carol");
				// alice: 2 refused on A, then 3 on B (the quota is shared); carol: 3.
				assertThat(refused.get(0).get("refusals").asLong()).isEqualTo(5);
				assertThat(refused.get(1).get("refusals").asLong()).isEqualTo(3);
			});
		}
	}

	private static String[] redisBackend() {
		return new String[] { "rate-limit.backend=redis", "spring.data.redis.host=127.0.0.1",
				"spring.data.redis.port=" + redis.port(), "rate-limit.heavy-hitters.publish-interval=1s" };
	}

	private static void calls(TestHttp client, String user, int count) {
		for (int i = 0; i < count; i++) {
			client.get("/api/items", "X-User-Id", user);
		}
	}


	private static ConfigurableApplicationContext start(String... extra) {
		return new SpringApplicationBuilder(ActuatorTestApplication.class).web(WebApplicationType.SERVLET)
			.properties("server.port=0", "management.endpoints.web.exposure.include=ratelimits",
					"spring.web.error.include-message=always", "rate-limit.policies.per-user.capacity=3",
					"rate-limit.policies.per-user.refill=3/1h", "rate-limit.policies.per-user.key=header('X-User-Id')",
					"rate-limit.routes[0].pattern=/api/**", "rate-limit.routes[0].policies=per-user",
					"rate-limit.budgets.tenant-daily.unit=USD", "rate-limit.budgets.tenant-daily.amount=1.00",
					"rate-limit.budgets.tenant-daily.window=day",
					"rate-limit.budgets.tenant-daily.key=header('X-Tenant-Id')")
			.properties(extra)
			.run();
	}

}
