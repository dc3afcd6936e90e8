package dev.ratelimit.actuate;

import java.time.Duration;

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
import static org.awaitility.Awaitility.await;

/**
 * Issue 30's incident as the operator met it, on two instances sharing one
 * redis-server: every caller of {@code agent-runs} is on a plan, and the
 * override of the limit's own numbers that answered 200 while changing no
 * caller is now refused on the instance that received it and never reaches
 * the store, so the other instance is untouched; the same numbers for plan
 * {@code free} apply on both, and the answer counts the recent callers of the
 * instance that answered, not the fleet's.
 */
class SharedPlanOverridesTests {

	private static final RedisServerFixture redis = RedisServerFixture.start();

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@Test
	void anOverrideThatChangesNoCallerReachesNoInstanceAndAPlansReachesBoth() {
		redis.flushAll();
		try (ConfigurableApplicationContext a = start(); ConfigurableApplicationContext b = start()) {
			TestHttp onA = TestHttp.of(a);
			TestHttp onB = TestHttp.of(b);
			run(onA, "ann", "free");
			run(onA, "bob", null);
			run(onB, "cid", "free");
			run(onB, "dee", "pro");
			// Each instance publishes its callers every second: A soon counts B's too (dee, on pro, only called B).
			await().atMost(Duration.ofSeconds(10))
				.until(() -> onA.get("/actuator/ratelimits/agent-runs").json().at("/recentCallers/byPlan/pro").asLong() == 1);

			Answer refused = onA.postJson("/actuator/ratelimits/agent-runs",
					"{\"capacity\": 2, \"refill\": \"1/1s\"}");
			assertThat(refused.status()).as(refused.body()).isEqualTo(409);
			assertThat(refused.json().get("message").asString()).contains("changes no caller")
				.contains("{\"plan\":\"free\",\"capacity\":2,\"refill\":\"1/1s\"}");
			assertThat(redis.call("HLEN", "rl:{%overrides}")).isEqualTo(":0");
			assertThat(onB.get("/actuator/ratelimits/agent-runs").json().get("overrides").isEmpty()).isTrue();

			Answer set = onA.postJson("/actuator/ratelimits/agent-runs",
					"{\"plan\": \"free\", \"capacity\": 2, \"refill\": \"1/1m\"}");
			assertThat(set.status()).as(set.body()).isEqualTo(200);
			JsonNode body = set.json();
			assertThat(body.get("shared").asBoolean()).isTrue();
			assertThat(body.at("/affects/plans").toString()).isEqualTo("[\"free\"]");
			// ann and bob (no plan: the default, free) called A, cid B: three free callers in the fleet.
			assertThat(body.at("/affects/recentCallers").asLong()).isEqualTo(3);
			assertThat(body.at("/recentCallers/byPlan/pro").asLong()).isEqualTo(1);
			assertThat(body.at("/recentCallers/counted").asString()).isEqualTo("every instance sharing the backend");

			await().atMost(Duration.ofSeconds(5))
				.until(() -> onB.get("/actuator/ratelimits/agent-runs").json().at("/plans/free/capacity").asLong() == 2);
			assertThat(allowed(onB, "eve", "free")).isEqualTo(2);
			assertThat(allowed(onB, "fay", "pro")).isEqualTo(10);
			onA.delete("/actuator/ratelimits/agent-runs?plan=free");
		}
		finally {
			redis.flushAll();
		}
	}

	private static void run(TestHttp client, String user, String plan) {
		Answer response = (plan != null) ? client.post("/agents/run", null, "X-User-Id", user, "X-Plan", plan)
				: client.post("/agents/run", null, "X-User-Id", user);
		assertThat(response.status()).isEqualTo(200);
	}

	private static int allowed(TestHttp client, String user, String plan) {
		int allowed = 0;
		while (allowed < 10 && client.post("/agents/run", null, "X-User-Id", user, "X-Plan", plan).status() == 200) {
			allowed++;
		}
		return allowed;
	}


	private static ConfigurableApplicationContext start() {
		return new SpringApplicationBuilder(ActuatorTestApplication.class).web(WebApplicationType.SERVLET)
			.properties("server.port=0", "management.endpoints.web.exposure.include=ratelimits",
					"management.endpoint.ratelimits.access=unrestricted", "spring.web.error.include-message=always",
					"rate-limit.backend=redis", "spring.data.redis.host=127.0.0.1",
					"spring.data.redis.port=" + redis.port(), "rate-limit.heavy-hitters.publish-interval=1s",
					"rate-limit.policies.agent-runs.capacity=5",
					"rate-limit.policies.agent-runs.refill=5/1h",
					"rate-limit.policies.agent-runs.key=header('X-User-Id')",
					"rate-limit.policies.agent-runs.plan=header('X-Plan')",
					"rate-limit.policies.agent-runs.default-plan=free",
					"rate-limit.policies.agent-runs.plans.free.capacity=20",
					"rate-limit.policies.agent-runs.plans.free.refill=20/1h",
					"rate-limit.policies.agent-runs.plans.pro.capacity=100",
					"rate-limit.policies.agent-runs.plans.pro.refill=100/1h", "rate-limit.routes[0].pattern=/agents/**",
					"rate-limit.routes[0].policies=agent-runs",
					// What the test application's annotations name.
					"rate-limit.policies.per-user.capacity=3", "rate-limit.policies.per-user.refill=3/1h",
					"rate-limit.budgets.tenant-daily.unit=USD", "rate-limit.budgets.tenant-daily.amount=1.00",
					"rate-limit.budgets.tenant-daily.window=day")
			.run();
	}

}
