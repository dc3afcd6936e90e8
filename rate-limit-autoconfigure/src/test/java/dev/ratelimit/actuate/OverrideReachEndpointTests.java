package dev.ratelimit.actuate;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.ratelimit.plans.RecentCallers;
import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 30's incident, over real HTTP on the memory backend: every caller of
 * {@code agent-runs} is on a plan, so an override of the limit's own numbers
 * changes no caller. The endpoint refuses it naming the plans to use, applies
 * it only when forced (with a warning), and says of every change which plans
 * it reaches and how many recent callers they had on this instance.
 * <p>
 * Every test starts the recent callers' clock two windows later, so that no
 * earlier test's callers are recent, and makes the same calls (three callers
 * on {@code free}, one of them without a plan, none on {@code pro}).
 */
@SpringBootTest(classes = { ActuatorTestApplication.class, OverrideReachEndpointTests.Clock.class },
		webEnvironment = WebEnvironment.RANDOM_PORT)
class OverrideReachEndpointTests {

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		ActuatorTestApplication.properties(registry);
		registry.add("rate-limit.policies.agent-runs.capacity", () -> "5");
		registry.add("rate-limit.policies.agent-runs.refill", () -> "5/1h");
		registry.add("rate-limit.policies.agent-runs.key", () -> "header('X-User-Id')");
		registry.add("rate-limit.policies.agent-runs.plan", () -> "header('X-Plan')");
		registry.add("rate-limit.policies.agent-runs.default-plan", () -> "free");
		registry.add("rate-limit.policies.agent-runs.plans.free.capacity", () -> "100");
		registry.add("rate-limit.policies.agent-runs.plans.free.refill", () -> "100/1h");
		registry.add("rate-limit.policies.agent-runs.plans.pro.capacity", () -> "1000");
		registry.add("rate-limit.policies.agent-runs.plans.pro.refill", () -> "1000/1h");
		registry.add("rate-limit.routes[1].pattern", () -> "/agents/**");
		registry.add("rate-limit.routes[1].policies", () -> "agent-runs");
	}

	@LocalServerPort
	int port;

	/** The recent callers' own clock, not a bean: the limiters keep the system's. */
	private static final ManualTimeSource recentCallersClock = new ManualTimeSource();

	private TestHttp http;

	@BeforeEach
	void callers() {
		recentCallersClock.advance(RecentCallers.DEFAULT_WINDOW.multipliedBy(2));
		this.http = TestHttp.on(this.port);
		this.http.post("/agents/run", null, "X-User-Id", "ann", "X-Plan", "free");
		this.http.post("/agents/run", null, "X-User-Id", "bob", "X-Plan", "free");
		// No plan: decided by the default plan, free.
		this.http.post("/agents/run", null, "X-User-Id", "cid");
		this.http.get("/api/items", "X-User-Id", "u1");
		this.http.get("/api/items", "X-User-Id", "u2");
	}

	@AfterEach
	void removeOverrides() {
		this.http.delete("/actuator/ratelimits/agent-runs");
		this.http.delete("/actuator/ratelimits/agent-runs?plan=free");
		this.http.delete("/actuator/ratelimits/agent-runs?plan=pro");
		this.http.delete("/actuator/ratelimits/per-user");
	}

	@Test
	void anOverrideOfTheLimitsOwnNumbersIsRefusedNamingThePlansToUse() {
		Answer refused = this.http.postJson("/actuator/ratelimits/agent-runs",
				"{\"capacity\": 2, \"refill\": \"1/1s\"}");

		assertThat(refused.status()).as(refused.body()).isEqualTo(409);
		JsonNode body = refused.json();
		assertThat(body.get("message").asString()).contains("changes no caller")
			.contains("[free, pro]")
			.contains("default plan 'free'")
			.contains("{\"plan\":\"free\",\"capacity\":2,\"refill\":\"1/1s\"}")
			.contains("\"force\": true");
		assertThat(body.at("/recentCallers/byPlan/free").asLong()).isEqualTo(3);
		assertThat(body.at("/recentCallers/byPlan/pro").asLong()).isZero();
		assertThat(body.at("/recentCallers/window").asString()).isEqualTo("PT5M");
		assertThat(body.at("/instead/0/plan").asString()).isEqualTo("free");
		assertThat(body.at("/instead/1/plan").asString()).isEqualTo("pro");
		assertThat(body.at("/instead/0/refill").asString()).isEqualTo("1/1s");
		// Nothing changed.
		JsonNode after = this.http.get("/actuator/ratelimits/agent-runs").json();
		assertThat(after.get("overrides").isEmpty()).isTrue();
		assertThat(after.at("/effective/capacity").asLong()).isEqualTo(5);
	}

	@Test
	void anOverrideOfAPlanIsAppliedAndSaysWhomItReaches() {
		Answer set = this.http.postJson("/actuator/ratelimits/agent-runs",
				"{\"plan\": \"free\", \"capacity\": 1, \"refill\": \"1/1h\"}");

		assertThat(set.status()).as(set.body()).isEqualTo(200);
		JsonNode body = set.json();
		assertThat(body.at("/affects/plans").toString()).isEqualTo("[\"free\"]");
		assertThat(body.at("/affects/keys").isEmpty()).isTrue();
		assertThat(body.at("/affects/recentCallers").asLong()).isEqualTo(3);
		assertThat(body.at("/recentCallers/byPlan/free").asLong()).isEqualTo(3);
		assertThat(body.get("warnings").isEmpty()).isTrue();
		assertThat(body.at("/plans/free/capacity").asLong()).isEqualTo(1);
		// The change reaches the callers it says it does: a new free caller has one call.
		assertThat(this.http.post("/agents/run", null, "X-User-Id", "dee").status()).isEqualTo(200);
		assertThat(this.http.post("/agents/run", null, "X-User-Id", "dee").status()).isEqualTo(429);
		assertThat(this.http.post("/agents/run", null, "X-User-Id", "eve", "X-Plan", "pro").status()).isEqualTo(200);
		assertThat(this.http.post("/agents/run", null, "X-User-Id", "eve", "X-Plan", "pro").status()).isEqualTo(200);
	}

	@Test
	void anOverrideOfAPlanNoRecentCallerIsOnIsRefusedUnlessForced() {
		Answer refused = this.http.postJson("/actuator/ratelimits/agent-runs",
				"{\"plan\": \"pro\", \"capacity\": 3}");

		assertThat(refused.status()).as(refused.body()).isEqualTo(409);
		assertThat(refused.json().get("message").asString()).contains("changes no recent caller")
			.contains("was on the plans [pro]")
			.contains("{\"plan\":\"free\",\"capacity\":3}");

		Answer forced = this.http.postJson("/actuator/ratelimits/agent-runs",
				"{\"plan\": \"pro\", \"capacity\": 3, \"force\": true}");
		assertThat(forced.status()).as(forced.body()).isEqualTo(200);
		assertThat(forced.json().at("/affects/plans").toString()).isEqualTo("[\"pro\"]");
		assertThat(forced.json().at("/affects/recentCallers").asLong()).isZero();
		assertThat(forced.json().at("/warnings/0").asString()).contains("changes no recent caller")
			.contains("applied because \"force\" was set");
	}

	@Test
	void forceAppliesAnOverrideThatChangesNoCallerWithAWarning() {
		Answer forced = this.http.postJson("/actuator/ratelimits/agent-runs",
				"{\"capacity\": 2, \"refill\": \"1/1s\", \"force\": true}");

		assertThat(forced.status()).as(forced.body()).isEqualTo(200);
		JsonNode body = forced.json();
		assertThat(body.at("/overrides/(limit)/capacity").asLong()).isEqualTo(2);
		assertThat(body.at("/affects/plans").isEmpty()).isTrue();
		assertThat(body.at("/affects/recentCallers").asLong()).isZero();
		assertThat(body.at("/warnings/0").asString()).contains("changes no caller")
			.contains("applied because \"force\" was set");
		// As the warning says: free callers keep their numbers.
		assertThat(this.http.post("/agents/run", null, "X-User-Id", "fay").status()).isEqualTo(200);
		assertThat(this.http.post("/agents/run", null, "X-User-Id", "fay").status()).isEqualTo(200);
		assertThat(this.http.post("/agents/run", null, "X-User-Id", "fay").status()).isEqualTo(200);

		Answer removed = this.http.delete("/actuator/ratelimits/agent-runs");
		assertThat(removed.status()).isEqualTo(200);
		assertThat(removed.json().at("/warnings/0").asString())
			.isEqualTo("Removing the override of rate-limit 'agent-runs' changes no caller's limit");
	}

	@Test
	void aLimitWithoutPlansAnswersAsBeforeWithItsRecentCallers() {
		Answer set = this.http.postJson("/actuator/ratelimits/per-user", "{\"capacity\": 5}");

		assertThat(set.status()).as(set.body()).isEqualTo(200);
		JsonNode body = set.json();
		assertThat(body.at("/effective/capacity").asLong()).isEqualTo(5);
		assertThat(body.at("/affects/plans").toString()).isEqualTo("[\"(limit)\"]");
		assertThat(body.at("/affects/recentCallers").asLong()).isEqualTo(2);
		assertThat(body.at("/recentCallers/byPlan/(limit)").asLong()).isEqualTo(2);
		assertThat(body.get("warnings").isEmpty()).isTrue();

		Answer same = this.http.postJson("/actuator/ratelimits/per-user", "{\"capacity\": 5}");
		assertThat(same.status()).as(same.body()).isEqualTo(409);
		assertThat(same.json().get("message").asString())
			.contains("changes no caller: the numbers its callers are decided by stay as they are");

		JsonNode read = this.http.get("/actuator/ratelimits/per-user").json();
		assertThat(read.get("affects").isNull()).isTrue();
		assertThat(read.at("/recentCallers/byPlan/(limit)").asLong()).isEqualTo(2);
	}

	@Test
	void aResetOfAKeyWithoutStateWarnsAndOneWithStateDoesNot() {
		Answer nothing = this.http.delete("/actuator/ratelimits/per-user/nobody");
		assertThat(nothing.status()).isEqualTo(200);
		assertThat(nothing.json().at("/warnings/0").asString())
			.contains("Key 'nobody' of 'per-user' had its full quota: the reset changed nothing")
			.contains("header('X-User-Id')");

		Answer used = this.http.delete("/actuator/ratelimits/per-user/u1");
		assertThat(used.status()).isEqualTo(200);
		assertThat(used.json().get("warnings").isEmpty()).isTrue();

		// A pro caller's state, which the default plan's smaller capacity would show as full.
		this.http.post("/agents/run", null, "X-User-Id", "gus", "X-Plan", "pro");
		assertThat(this.http.delete("/actuator/ratelimits/agent-runs/gus").json().get("warnings").isEmpty())
			.isTrue();

		Answer budget = this.http.delete("/actuator/ratelimits/tenant-daily/idle");
		assertThat(budget.json().at("/warnings/0").asString()).contains("had its full quota");
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Clock {

		@Bean
		RecentCallers recentCallers() {
			return new RecentCallers(recentCallersClock, RecentCallers.DEFAULT_WINDOW);
		}

	}

}
