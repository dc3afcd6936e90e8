package dev.ratelimit.actuate;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.JsonNode;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Run-time overrides through the {@code ratelimits} endpoint on the memory
 * backend, over real HTTP: set, listed, enforced, removed, and every kind of
 * bad input answered 400.
 */
@SpringBootTest(classes = ActuatorTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT)
@ExtendWith(OutputCaptureExtension.class)
class RateLimitOverridesEndpointTests {

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		ActuatorTestApplication.properties(registry);
		registry.add("rate-limit.policies.tiered.capacity", () -> "2");
		registry.add("rate-limit.policies.tiered.refill", () -> "2/1h");
		registry.add("rate-limit.policies.tiered.plan", () -> "header('X-Plan')");
		registry.add("rate-limit.policies.tiered.default-plan", () -> "free");
		registry.add("rate-limit.policies.tiered.plans.free.capacity", () -> "2");
		registry.add("rate-limit.policies.tiered.plans.free.refill", () -> "2/1h");
		registry.add("rate-limit.policies.tiered.plans.pro.capacity", () -> "10");
		registry.add("rate-limit.policies.tiered.plans.pro.refill", () -> "10/1h");
		registry.add("rate-limit.policies.tiered.overrides.partner.capacity", () -> "50");
		registry.add("rate-limit.policies.tiered.exempt.cidrs", () -> "10.0.0.0/8");
		registry.add("rate-limit.budgets.tenant-daily.overrides.big.amount", () -> "5");
		registry.add("rate-limit.concurrency.calls.permits", () -> "2");
		registry.add("rate-limit.concurrency.calls.overrides.partner.permits", () -> "8");
	}

	@LocalServerPort
	int port;

	private TestHttp http;

	@BeforeEach
	void client() {
		this.http = TestHttp.on(this.port);
	}

	@AfterEach
	void removeOverrides() {
		this.http.delete("/actuator/ratelimits/per-user");
		this.http.delete("/actuator/ratelimits/tiered?plan=pro");
	}

	@Test
	void anOverrideIsEnforcedListedAndRemoved(CapturedOutput output) {
		Answer set = this.http.postJson("/actuator/ratelimits/per-user", "{\"capacity\": 1}");

		assertThat(set.status()).isEqualTo(200);
		assertThat(set.json().at("/overrides/(limit)/capacity").asLong()).isEqualTo(1);
		assertThat(set.json().at("/configured/capacity").asLong()).isEqualTo(3);
		assertThat(set.json().at("/effective/capacity").asLong()).isEqualTo(1);
		assertThat(set.json().get("shared").asBoolean()).isFalse();
		assertThat(output).contains("Override of rate-limit 'per-user' set to {capacity=1}: "
				+ "{capacity=3, refill=3/1h} -> {capacity=1, refill=3/1h}");
		assertThat(this.http.get("/api/items", "X-User-Id", "ann").status()).isEqualTo(200);
		assertThat(this.http.get("/api/items", "X-User-Id", "ann").status()).isEqualTo(429);

		JsonNode listed = this.http.get("/actuator/ratelimits/per-user").json();
		assertThat(listed.at("/overrides/(limit)/capacity").asLong()).isEqualTo(1);
		JsonNode overview = this.http.get("/actuator/ratelimits").json().at("/rateLimits/0");
		assertThat(overview.get("name").asString()).isEqualTo("per-user");
		assertThat(overview.get("capacity").asLong()).isEqualTo(1);
		assertThat(overview.at("/definition/overrides/(limit)/capacity").asLong()).isEqualTo(1);

		Answer removed = this.http.delete("/actuator/ratelimits/per-user");
		assertThat(removed.status()).isEqualTo(200);
		assertThat(removed.json().get("overrides").isEmpty()).isTrue();
		assertThat(output).contains("Override {capacity=1} of rate-limit 'per-user' removed: "
				+ "{capacity=1, refill=3/1h} -> {capacity=3, refill=3/1h}");
		for (int i = 0; i < 3; i++) {
			assertThat(this.http.get("/api/items", "X-User-Id", "bob").status()).isEqualTo(200);
		}
		assertThat(this.http.get("/api/items", "X-User-Id", "bob").status()).isEqualTo(429);
	}

	@Test
	void aPlansQuotaIsOverriddenAndTheOverviewShowsPlansKeyOverridesAndExemption() {
		Answer set = this.http.postJson("/actuator/ratelimits/tiered",
				"{\"plan\": \"pro\", \"capacity\": \"20\", \"refill\": \"20/1m\"}");

		assertThat(set.status()).isEqualTo(200);
		assertThat(set.json().at("/plans/pro/capacity").asLong()).isEqualTo(20);
		assertThat(set.json().at("/plans/pro/refill").asString()).isEqualTo("20/1m");
		assertThat(set.json().at("/plans/free/capacity").asLong()).isEqualTo(2);
		JsonNode tiered = null;
		for (JsonNode policy : this.http.get("/actuator/ratelimits").json().get("rateLimits")) {
			if (policy.get("name").asString().equals("tiered")) {
				tiered = policy;
			}
		}
		assertThat(tiered).isNotNull();
		JsonNode definition = tiered.get("definition");
		assertThat(definition.get("plan").asString()).isEqualTo("header('X-Plan')");
		assertThat(definition.get("defaultPlan").asString()).isEqualTo("free");
		assertThat(definition.at("/plans/pro/capacity").asLong()).isEqualTo(20);
		assertThat(definition.at("/plans/free/refill").asString()).isEqualTo("2/1h");
		assertThat(definition.at("/overrides/pro/refill").asString()).isEqualTo("20/1m");
		assertThat(definition.at("/keyOverrides/partner/capacity").asLong()).isEqualTo(50);
		assertThat(definition.at("/exempt/cidrs/0").asString()).isEqualTo("10.0.0.0/8");
		assertThat(definition.at("/overrides/pro/capacity").asLong()).isEqualTo(20);
	}

	@Test
	void badOverridesAnswer400WithTheReasonAndChangeNothing() {
		assertBadRequest(this.http.postJson("/actuator/ratelimits/nope", "{\"capacity\": 5}"),
				"No configured rate limit, budget or concurrency cap named 'nope'");
		assertBadRequest(this.http.postJson("/actuator/ratelimits/runs", "{\"capacity\": 5}"),
				"defined inline in an annotation");
		assertBadRequest(this.http.postJson("/actuator/ratelimits/tiered", "{\"plan\": \"gold\", \"capacity\": 5}"),
				"plan 'gold' is invalid");
		assertBadRequest(this.http.postJson("/actuator/ratelimits/per-user", "{\"amount\": \"5\"}"),
				"has no amount");
		assertBadRequest(this.http.postJson("/actuator/ratelimits/tenant-daily", "{\"permits\": 5}"),
				"has no permits");
		assertBadRequest(this.http.postJson("/actuator/ratelimits/per-user", "{\"capacity\": -1}"), "capacity");
		assertBadRequest(this.http.postJson("/actuator/ratelimits/per-user", "{\"capacity\": \"lots\"}"),
				"must be a whole number");
		assertBadRequest(this.http.postJson("/actuator/ratelimits/per-user", "{\"refill\": \"fast\"}"),
				"expected tokens/period");
		assertBadRequest(this.http.postJson("/actuator/ratelimits/per-user", "{}"), "set at least one of");
		assertBadRequest(this.http.delete("/actuator/ratelimits/per-user"), "No override");
		assertBadRequest(this.http.delete("/actuator/ratelimits/nope"), "named 'nope'");

		assertThat(this.http.get("/actuator/ratelimits/per-user").json().get("overrides").isEmpty()).isTrue();
		assertThat(this.http.get("/actuator/ratelimits/tiered").json().get("overrides").isEmpty()).isTrue();
	}

	@Test
	void aListedKeysStateShowsItsOwnNumbersAndOtherKeysTheDefaultPlans() {
		JsonNode partner = this.http.get("/actuator/ratelimits/tiered/partner").json();
		assertThat(partner.get("limit").asLong()).isEqualTo(50);
		assertThat(partner.get("remaining").asLong()).isEqualTo(50);
		assertThat(this.http.get("/actuator/ratelimits/tiered/someone").json().get("limit").asLong()).isEqualTo(2);

		assertThat(this.http.get("/actuator/ratelimits/tenant-daily/big").json().at("/windows/0/amount").asString())
			.isEqualTo("5");
		assertThat(this.http.get("/actuator/ratelimits/tenant-daily/t9").json().at("/windows/0/remaining").asString())
			.isEqualTo("1");

		JsonNode cap = this.http.get("/actuator/ratelimits/calls/partner").json();
		assertThat(cap.get("permits").asInt()).isEqualTo(8);
		assertThat(cap.get("available").asInt()).isEqualTo(8);
		assertThat(this.http.get("/actuator/ratelimits/calls/someone").json().get("permits").asInt()).isEqualTo(2);

		assertThat(this.http.delete("/actuator/ratelimits/tiered/partner").status()).isEqualTo(200);
	}

	@Test
	void aBudgetsAmountIsOverridden() {
		Answer set = this.http.postJson("/actuator/ratelimits/tenant-daily", "{\"amount\": 0.2}");
		try {
			assertThat(set.status()).isEqualTo(200);
			assertThat(set.json().at("/effective/amount").asString()).isEqualTo("0.2");
			// Each call reserves 0.10 and settles at 0.25: the first spends more than the new 0.20.
			assertThat(this.http.post("/chat", null, "X-Tenant-Id", "t1").status()).isEqualTo(200);
			assertThat(this.http.post("/chat", null, "X-Tenant-Id", "t1").status()).isEqualTo(429);
		}
		finally {
			this.http.delete("/actuator/ratelimits/tenant-daily");
		}
	}

	private static void assertBadRequest(Answer response, String reason) {
		assertThat(response.status()).as(response.body()).isEqualTo(400);
		assertThat(response.body()).contains(reason);
	}

}
