package dev.ratelimit.actuate;

import java.math.BigDecimal;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.ratelimit.actuate.ActuatorTestApplication.LimitedController;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code ratelimits} endpoint and the {@code rateLimit} health contributor
 * over real HTTP, on the in-memory backend: every policy with where it applies,
 * one key's state, resetting a key.
 */
@SpringBootTest(classes = ActuatorTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT)
class RateLimitEndpointTests {

	private static final String CONTROLLER = LimitedController.class.getName();

	@DynamicPropertySource
	static void properties(DynamicPropertyRegistry registry) {
		ActuatorTestApplication.properties(registry);
	}

	@LocalServerPort
	int port;

	private TestHttp http;

	@BeforeEach
	void client() {
		this.http = TestHttp.on(this.port);
	}

	@Test
	void listsEachConfiguredPolicyWithItsRouteRulesAndAnnotatedMethods() {
		Answer response = this.http.get("/actuator/ratelimits");
		assertThat(response.status()).isEqualTo(200);
		JsonNode perUser = element(response.json().get("rateLimits"), "name", "per-user");
		assertThat(perUser.get("inline").asBoolean()).isFalse();
		assertThat(perUser.get("algorithm").asString()).isEqualTo("token-bucket");
		assertThat(perUser.get("capacity").asLong()).isEqualTo(3);
		assertThat(perUser.get("refill").asString()).isEqualTo("3/1h");
		assertThat(perUser.get("window").isNull()).isTrue();
		assertThat(perUser.get("key").asString()).isEqualTo("header('X-User-Id')");
		// Not set: the default of rate limits.
		assertThat(perUser.get("failureMode").asString()).isEqualTo("local");
		assertThat(perUser.get("missingKey").asString()).isEqualTo("shared");
		assertThat(perUser.get("shadow").asBoolean()).isFalse();
		assertThat(perUser.get("maxWait").asString()).isEqualTo("0s");
		assertThat(perUser.get("localInstances").asInt()).isEqualTo(1);
		assertThat(perUser.get("prefetch").asLong()).isZero();
		assertThat(perUser.get("routes")).hasSize(1);
		assertThat(perUser.at("/routes/0/pattern").asString()).isEqualTo("/api/**");
		assertThat(perUser.at("/routes/0/methods/0").asString()).isEqualTo("GET");
		assertThat(perUser.get("methods")).hasSize(1);
		assertThat(perUser.at("/methods/0/method").asString()).isEqualTo(CONTROLLER + "#orders");
		assertThat(perUser.at("/methods/0/key").asString()).isEqualTo("header('X-User-Id')");
	}

	@Test
	void listsPoliciesDefinedInlineInAnnotations() {
		JsonNode policies = this.http.get("/actuator/ratelimits").json();
		JsonNode runs = element(policies.get("rateLimits"), "name", "runs");
		assertThat(runs.get("inline").asBoolean()).isTrue();
		assertThat(runs.get("capacity").asLong()).isEqualTo(2);
		assertThat(runs.get("refill").asString()).isEqualTo("2/1h");
		assertThat(runs.get("routes")).isEmpty();
		assertThat(runs.at("/methods/0/method").asString()).isEqualTo(CONTROLLER + "#runs");
		JsonNode slow = element(policies.get("concurrency"), "name", "LimitedController.slow.concurrency");
		assertThat(slow.get("inline").asBoolean()).isTrue();
		assertThat(slow.get("permits").asInt()).isEqualTo(2);
		assertThat(slow.get("scope").asString()).isEqualTo("local");
		assertThat(slow.get("key").asString()).isEqualTo("global");
		assertThat(slow.get("permitTtl").asString()).isEqualTo("30s");
		assertThat(slow.get("rejection").asString()).isEqualTo("too-many-requests");
		assertThat(slow.at("/methods/0/method").asString()).isEqualTo(CONTROLLER + "#slow");
	}

	@Test
	void listsBudgetsWithTheirAmountsAsDecimals() {
		JsonNode budget = element(this.http.get("/actuator/ratelimits").json().get("budgets"), "name",
				"tenant-daily");
		assertThat(budget.get("unit").asString()).isEqualTo("USD");
		assertThat(budget.at("/limits/0/window").asString()).isEqualTo("day");
		assertThat(budget.at("/limits/0/amount").decimalValue()).isEqualByComparingTo("1.00");
		assertThat(budget.get("zone").asString()).isEqualTo("UTC");
		assertThat(budget.get("key").asString()).isEqualTo("header('X-Tenant-Id')");
		assertThat(budget.get("failureMode").asString()).isEqualTo("closed");
		assertThat(budget.get("reservationTimeout").asString()).isEqualTo("5m");
		assertThat(budget.get("onError").asString()).isEqualTo("keep");
		assertThat(budget.at("/methods/0/method").asString()).isEqualTo(CONTROLLER + "#chat");
	}

	@Test
	void keyStateShowsWhatRequestsTookAndReadingItTakesNothing() {
		assertThat(this.http.get("/api/items", "X-User-Id", "ann").status()).isEqualTo(200);
		assertThat(this.http.get("/api/items", "X-User-Id", "ann").status()).isEqualTo(200);
		for (int read = 0; read < 3; read++) {
			Answer response = this.http.get("/actuator/ratelimits/per-user/ann");
			assertThat(response.status()).isEqualTo(200);
			JsonNode state = response.json();
			assertThat(state.get("type").asString()).isEqualTo("rate-limit");
			assertThat(state.get("key").asString()).isEqualTo("ann");
			assertThat(state.get("storageKey").asString()).isEqualTo("rl:per-user:{ann}");
			assertThat(state.get("limit").asLong()).isEqualTo(3);
			assertThat(state.get("remaining").asLong()).isEqualTo(1);
			assertThat(state.get("resetAfter").asString()).startsWith("PT");
		}
		assertThat(this.http.get("/api/items", "X-User-Id", "ann").rateLimit()).startsWith("\"per-user\";r=0;");
	}

	@Test
	void deleteResetsAKeySoItsNextRequestIsAllowedWithTheFullQuota() {
		for (int i = 0; i < 3; i++) {
			this.http.get("/api/items", "X-User-Id", "bob");
		}
		assertThat(this.http.get("/api/items", "X-User-Id", "bob").status()).isEqualTo(429);
		Answer reset = this.http.delete("/actuator/ratelimits/per-user/bob");
		assertThat(reset.status()).isEqualTo(200);
		assertThat(reset.json().get("storageKey").asString()).isEqualTo("rl:per-user:{bob}");
		assertThat(this.http.get("/actuator/ratelimits/per-user/bob").json().get("remaining").asLong()).isEqualTo(3);
		Answer next = this.http.get("/api/items", "X-User-Id", "bob");
		assertThat(next.status()).isEqualTo(200);
		assertThat(next.rateLimit()).startsWith("\"per-user\";r=2;");
	}

	@Test
	void inlinePolicyKeysCanBeReadAndReset() {
		this.http.post("/runs", null, "X-User-Id", "cat");
		this.http.post("/runs", null, "X-User-Id", "cat");
		assertThat(this.http.post("/runs", null, "X-User-Id", "cat").status()).isEqualTo(429);
		assertThat(this.http.get("/actuator/ratelimits/runs/cat").json().get("remaining").asLong()).isZero();
		assertThat(this.http.delete("/actuator/ratelimits/runs/cat").status()).isEqualTo(200);
		assertThat(this.http.post("/runs", null, "X-User-Id", "cat").status()).isEqualTo(200);
	}

	@Test
	void budgetKeyStateShowsSpentAndRemainingPerWindowAndDeleteResetsIt() {
		assertThat(this.http.post("/chat", null, "X-Tenant-Id", "acme").status()).isEqualTo(200);
		assertThat(this.http.post("/chat", null, "X-Tenant-Id", "acme").status()).isEqualTo(200);
		JsonNode state = this.http.get("/actuator/ratelimits/tenant-daily/acme").json();
		assertThat(state.get("type").asString()).isEqualTo("budget");
		assertThat(state.get("unit").asString()).isEqualTo("USD");
		assertThat(state.get("storageKey").asString()).isEqualTo("rl:budget:tenant-daily:{acme}");
		JsonNode day = state.at("/windows/0");
		assertThat(day.get("window").asString()).isEqualTo("day");
		assertThat(day.get("amount").decimalValue()).isEqualByComparingTo("1");
		assertThat(day.get("spent").decimalValue()).isEqualByComparingTo("0.50");
		assertThat(day.get("reserved").decimalValue()).isEqualByComparingTo(BigDecimal.ZERO);
		assertThat(day.get("remaining").decimalValue()).isEqualByComparingTo("0.50");
		assertThat(this.http.delete("/actuator/ratelimits/tenant-daily/acme").status()).isEqualTo(200);
		JsonNode afterReset = this.http.get("/actuator/ratelimits/tenant-daily/acme").json().at("/windows/0");
		assertThat(afterReset.get("spent").decimalValue()).isEqualByComparingTo(BigDecimal.ZERO);
		assertThat(afterReset.get("remaining").decimalValue()).isEqualByComparingTo("1");
	}

	@Test
	void concurrencyKeyStateShowsPermitsInUseAndCannotBeReset() {
		assertThat(this.http.get("/slow").status()).isEqualTo(200);
		JsonNode state = this.http.get("/actuator/ratelimits/LimitedController.slow.concurrency/global").json();
		assertThat(state.get("type").asString()).isEqualTo("concurrency");
		assertThat(state.get("permits").asInt()).isEqualTo(2);
		assertThat(state.get("inUse").asInt()).isZero();
		assertThat(state.get("available").asInt()).isEqualTo(2);
		Answer reset = this.http.delete("/actuator/ratelimits/LimitedController.slow.concurrency/global");
		assertThat(reset.status()).isEqualTo(400);
		assertThat(reset.body()).contains("cannot be reset");
	}

	@Test
	void unknownPolicyIsNotFoundAndCannotBeReset() {
		assertThat(this.http.get("/actuator/ratelimits/nope/ann").status()).isEqualTo(404);
		Answer reset = this.http.delete("/actuator/ratelimits/nope/ann");
		assertThat(reset.status()).isEqualTo(400);
		assertThat(reset.body()).contains("No rate limit, budget or concurrency cap named 'nope'");
	}

	@Test
	void healthOfTheMemoryBackendIsUp() {
		Answer response = this.http.get("/actuator/health/rateLimit");
		assertThat(response.status()).isEqualTo(200);
		assertThat(response.json().get("status").asString()).isEqualTo("UP");
		assertThat(response.json().at("/details/backend").asString()).isEqualTo("memory");
	}

	/**
	 * Finds the element of a JSON array whose field has a value.
	 * @param array the array
	 * @param field the field
	 * @param value the value
	 * @return the element
	 * @throws AssertionError if none has it
	 */
	private static JsonNode element(JsonNode array, String field, String value) {
		for (JsonNode element : array) {
			if (value.equals(element.path(field).asString())) {
				return element;
			}
		}
		throw new AssertionError("No element with " + field + "=" + value + " in " + array);
	}

}
