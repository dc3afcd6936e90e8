package dev.ratelimit.sample;

import java.util.List;
import java.util.Map;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;

import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The operator's view of the sample app, over real HTTP as the README tour
 * shows it: {@code /actuator/ratelimits}, {@code /actuator/health} and
 * {@code /actuator/metrics} and {@code /actuator/prometheus}.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
@Import(SampleApplicationHttpTests.ManualClock.class)
class SampleApplicationActuatorTests {

	@LocalServerPort
	int port;

	TestHttp http;

	@BeforeEach
	void setUp() {
		this.http = TestHttp.on(this.port);
	}

	@Test
	void ratelimitsListsEveryPolicyWithWhereItApplies() throws Exception {
		Answer response = this.http.get("/actuator/ratelimits");
		assertThat(response.status()).isEqualTo(200);
		String body = response.body();
		assertThat((List<String>) JsonPath.read(body, "$.rateLimits[*].name"))
			.containsExactlyInAnyOrder("agent-runs", "per-ip", "tenant-chat", "provider-rate", "failed-logins");
		assertThat((List<String>) JsonPath.read(body, "$.rateLimits[?(@.name == 'agent-runs')].refill"))
			.containsExactly("1/1s");
		assertThat((List<String>) JsonPath.read(body, "$.rateLimits[?(@.name == 'agent-runs')].methods[*].method"))
			.containsExactly("dev.ratelimit.sample.AgentController#run");
		assertThat((List<String>) JsonPath.read(body, "$.rateLimits[?(@.name == 'per-ip')].routes[*].pattern"))
			.containsExactly("/api/**");
		assertThat((List<String>) JsonPath.read(body, "$.rateLimits[?(@.name == 'failed-logins')].methods[*].method"))
			.containsExactly("dev.ratelimit.sample.LoginController#login");
		assertThat((List<String>) JsonPath.read(body, "$.budgets[*].name")).containsExactly("tenant-daily");
		assertThat((List<String>) JsonPath.read(body, "$.concurrency[*].name")).containsExactly("provider");
	}

	@Test
	void ratelimitsReadsOneKeyWithoutTakingAnything() throws Exception {
		assertThat(this.http.postJson("/agent/run", "{}", "X-User-Id", "olga").status()).isEqualTo(200);
		for (int i = 0; i < 2; i++) {
			Answer response = this.http.get("/actuator/ratelimits/agent-runs/olga");
			assertThat(response.status()).isEqualTo(200);
			assertThat((Integer) JsonPath.read(response.body(), "$.limit")).isEqualTo(5);
			assertThat((Integer) JsonPath.read(response.body(), "$.remaining")).isEqualTo(4);
		}
	}

	@Test
	void ratelimitsListsTheNoisyCallerFirst() throws Exception {
		// A runaway agent: 8 runs against a limit of 5, and a quiet neighbour with one.
		for (int i = 0; i < 8; i++) {
			this.http.postJson("/agent/run", "{}", "X-User-Id", "runaway");
		}
		this.http.postJson("/agent/run", "{}", "X-User-Id", "quiet");
		Answer response = this.http.get("/actuator/ratelimits/agent-runs/top");
		assertThat(response.status()).isEqualTo(200);
		String body = response.body();
		assertThat((String) JsonPath.read(body, "$.byRefusals[0].key")).isEqualTo("runaway");
		assertThat((Integer) JsonPath.read(body, "$.byRefusals[0].refusals")).isEqualTo(3);
		assertThat((Integer) JsonPath.read(body, "$.byRefusals[0].state.remaining")).isZero();
		assertThat((List<String>) JsonPath.read(body, "$.byUnits[*].key")).contains("runaway", "quiet");
	}

	@Test
	void ratelimitsIsReadOnly() throws Exception {
		assertThat(this.http.delete("/actuator/ratelimits/agent-runs/olga").status()).isEqualTo(405);
	}

	@Test
	void healthShowsTheLimiterAndNotBootsOwnRedisCheck() throws Exception {
		Answer response = this.http.get("/actuator/health");
		assertThat(response.status()).isEqualTo(200);
		assertThat((String) JsonPath.read(response.body(), "$.status")).isEqualTo("UP");
		assertThat((String) JsonPath.read(response.body(), "$.components.rateLimit.details.backend"))
			.isEqualTo("memory");
		assertThat((Map<String, Object>) JsonPath.read(response.body(), "$.components")).doesNotContainKey("redis");
	}

	@Test
	void metricsCountDecisionsPerPolicyAndOutcome() throws Exception {
		assertThat(this.http.postJson("/agent/run", "{}", "X-User-Id", "pavel").status()).isEqualTo(200);
		Answer response = this.http.get("/actuator/metrics/rate.limit.decisions?tag=policy:agent-runs");
		assertThat(response.status()).isEqualTo(200);
		assertThat((List<String>) JsonPath.read(response.body(), "$.availableTags[?(@.tag == 'outcome')].values[*]"))
			.contains("allowed");
	}

	@Test
	void prometheusHasTheStoreLatencyHistogramAndEveryLimitsCountersBeforeTheirFirstEvent() throws Exception {
		assertThat(this.http.postJson("/agent/run", "{}", "X-User-Id", "rita").status()).isEqualTo(200);
		Answer response = this.http.get("/actuator/prometheus");
		assertThat(response.status()).isEqualTo(200);
		List<String> lines = response.body().lines().toList();
		// The dashboard's p99 store-latency panel reads the timer's histogram, which application.yml turns on.
		assertThat(lines).anyMatch((line) -> line.startsWith("rate_limit_store_latency_seconds_bucket{"));
		// Registered at 0 at start-up, whatever the tests before took: the first refusal is an increase.
		assertThat(lines).anyMatch((line) -> line.startsWith("rate_limit_decisions_total{")
				&& line.contains("kind=\"budget\"") && line.contains("outcome=\"denied\"")
				&& line.contains("policy=\"tenant-daily\""));
	}

}
