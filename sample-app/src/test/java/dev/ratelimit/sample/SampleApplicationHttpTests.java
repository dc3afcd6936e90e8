package dev.ratelimit.sample;

import java.time.Duration;
import java.util.List;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.memory.InMemoryRateLimitBackend;
import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static dev.ratelimit.sample.HttpContract.assertAllowed;
import static dev.ratelimit.sample.HttpContract.assertTooManyRequests;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample app over real HTTP on the default in-memory backend, with a clock
 * the test moves.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
@Import(SampleApplicationHttpTests.ManualClock.class)
class SampleApplicationHttpTests {

	@LocalServerPort
	int port;

	@Autowired
	ManualTimeSource clock;

	@Autowired
	RateLimitBackend backend;

	TestHttp http;

	@BeforeEach
	void setUp() {
		this.http = TestHttp.on(this.port);
		// Every test starts from full buckets: an hour refills them all.
		this.clock.advance(Duration.ofHours(1));
	}

	@Test
	void startsOnTheInMemoryBackend() {
		assertThat(this.backend).isInstanceOf(InMemoryRateLimitBackend.class);
	}

	@Test
	void agentRunAllowsABurstOfFiveThenAnswers429WithTheContract() throws Exception {
		for (int remaining = 4; remaining >= 0; remaining--) {
			Answer response = this.http.postJson("/agent/run", "{}", "X-User-Id", "alice");
			assertAllowed(response, "\"agent-runs\";q=5;w=5", "\"agent-runs\";r=" + remaining + ";t=" + (5 - remaining));
			assertThat((String) JsonPath.read(response.body(), "$.status")).isEqualTo("queued");
		}
		Answer denied = this.http.postJson("/agent/run", "{}", "X-User-Id", "alice");
		assertTooManyRequests(denied, "1", List.of("agent-runs"), "/agent/run");
		HttpContract.assertRateLimitFields(denied, "\"agent-runs\";q=5;w=5", "\"agent-runs\";r=0;t=5");
	}

	@Test
	void agentRunRefillsOnePerSecond() throws Exception {
		for (int i = 0; i < 5; i++) {
			assertThat(this.http.postJson("/agent/run", "{}", "X-User-Id", "bob").status()).isEqualTo(200);
		}
		this.clock.advance(Duration.ofMillis(999));
		assertThat(this.http.postJson("/agent/run", "{}", "X-User-Id", "bob").status()).isEqualTo(429);
		this.clock.advance(Duration.ofMillis(1));
		assertAllowed(this.http.postJson("/agent/run", "{}", "X-User-Id", "bob"), "\"agent-runs\";q=5;w=5",
				"\"agent-runs\";r=0;t=5");
		Answer denied = this.http.postJson("/agent/run", "{}", "X-User-Id", "bob");
		assertTooManyRequests(denied, "1", List.of("agent-runs"), "/agent/run");
	}

	@Test
	void agentRunLimitsEachUserSeparately() throws Exception {
		for (int i = 0; i < 5; i++) {
			this.http.postJson("/agent/run", "{}", "X-User-Id", "carol");
		}
		assertThat(this.http.postJson("/agent/run", "{}", "X-User-Id", "carol").status()).isEqualTo(429);
		assertThat(this.http.postJson("/agent/run", "{}", "X-User-Id", "dave").status()).isEqualTo(200);
	}

	@Test
	void agentRunWithoutUserHeaderIsABadRequestNotAServerError() throws Exception {
		Answer response = this.http.postJson("/agent/run", "{}");
		assertThat(response.status()).isEqualTo(400);
		assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(
				(type) -> assertThat(type).startsWith("application/problem+json"));
		assertThat((String) JsonPath.read(response.body(), "$.detail")).contains("agent-runs")
			.contains("header('X-User-Id')");
	}

	@Test
	void hostileUserKeysAreLimitedLikeAnyOther() throws Exception {
		String hostile = "{x}" + "y".repeat(4000);
		for (int i = 0; i < 5; i++) {
			assertThat(this.http.postJson("/agent/run", "{}", "X-User-Id", hostile).status()).isEqualTo(200);
		}
		assertThat(this.http.postJson("/agent/run", "{}", "X-User-Id", hostile).status()).isEqualTo(429);
	}

	@Test
	void helloIsLimitedPerClientIpByTheRouteRule() throws Exception {
		for (int remaining = 19; remaining >= 0; remaining--) {
			Answer response = this.http.get("/api/hello");
			assertAllowed(response, "\"per-ip\";q=20;w=2",
					"\"per-ip\";r=" + remaining + ";t=" + -Math.floorDiv(-(20 - remaining) * 100_000, 1_000_000));
		}
		Answer denied = this.http.get("/api/hello");
		assertTooManyRequests(denied, "1", List.of("per-ip"), "/api/hello");
		assertThat(denied.body()).doesNotContain("\"message\"");
		this.clock.advance(Duration.ofMillis(100));
		assertThat(this.http.get("/api/hello").status()).isEqualTo(200);
	}

	@Test
	void spoofedForwardedForFromAnUntrustedPeerDoesNotEscapeTheIpLimit() throws Exception {
		for (int i = 0; i < 20; i++) {
			assertThat(this.http.get("/api/hello", "X-Forwarded-For", "10.0.0." + i).status()).isEqualTo(200);
		}
		assertThat(this.http.get("/api/hello", "X-Forwarded-For", "10.9.9.9").status()).isEqualTo(429);
	}

	@Test
	void proUserGetsTheProPlanFiftyAtOnceThenTenPerSecond() throws Exception {
		for (int remaining = 49; remaining >= 0; remaining--) {
			Answer response = this.http.postJson("/agent/run", "{}", "X-User-Id", "pro-frank");
			assertAllowed(response, "\"agent-runs\";q=50;w=5",
					"\"agent-runs\";r=" + remaining + ";t=" + ((50 - remaining + 9) / 10));
		}
		Answer denied = this.http.postJson("/agent/run", "{}", "X-User-Id", "pro-frank");
		assertTooManyRequests(denied, "1", List.of("agent-runs"), "/agent/run");
		this.clock.advance(Duration.ofMillis(300));
		for (int i = 0; i < 3; i++) {
			assertThat(this.http.postJson("/agent/run", "{}", "X-User-Id", "pro-frank").status()).isEqualTo(200);
		}
		assertThat(this.http.postJson("/agent/run", "{}", "X-User-Id", "pro-frank").status()).isEqualTo(429);
		// A header naming a plan chooses nothing: the plan is the application's to say.
		for (int i = 0; i < 5; i++) {
			this.http.postJson("/agent/run", "{}", "X-User-Id", "grace", "X-Plan", "pro");
		}
		assertThat(this.http.postJson("/agent/run", "{}", "X-User-Id", "grace", "X-Plan", "pro").status()).isEqualTo(429);
	}

	@Test
	void agentRunCarriesNoRouteHeadersAndHelloNoAnnotationHeaders() throws Exception {
		assertThat(this.http.postJson("/agent/run", "{}", "X-User-Id", "erin").headers().firstValue("RateLimit-Policy"))
			.hasValue("\"agent-runs\";q=5;w=5");
		assertThat(this.http.get("/api/hello").headers().firstValue("RateLimit-Policy"))
			.hasValue("\"per-ip\";q=20;w=2");
	}

	@Test
	void chatIsChargedItsActualCostAndReportsTheRemainingBudget() throws Exception {
		Answer response = this.http.postJson("/agent/chat", "{\"prompt\":\"hello\",\"maxTokens\":1000}",
				"X-Tenant-Id", "acme");
		assertThat(response.status()).isEqualTo(200);
		// 16 tokens at $0.000002 were charged, not the 1000-token estimate
		assertThat(response.headers().firstValue("Budget-Remaining")).hasValueSatisfying((field) -> assertThat(field)
			.startsWith("\"tenant-daily\";w=\"day\";r=\"0.999968\";q=\"1.000000\";u=\"USD\";t="));
		// the tenant's own limit; the provider's rate, shared by every tenant, is not advertised
		assertThat(response.headers().firstValue("RateLimit")).hasValue("\"tenant-chat\";r=9;t=1");
		assertThat(response.headers().firstValue("RateLimit-Policy")).hasValue("\"tenant-chat\";q=10;w=2");
		assertThat(new java.math.BigDecimal(JsonPath.read(response.body(), "$.usage.costUsd").toString()))
			.isEqualByComparingTo("0.000032");
	}

	@Test
	void chatWhoseEstimateNoLongerFitsTheDailyBudgetIsRefusedBeforeTheProviderIsCalled() throws Exception {
		// a prompt as long as the token allowance: each call costs its whole estimate, $0.40
		String expensive = "{\"prompt\":\"" + "x".repeat(200_000) + "\",\"maxTokens\":200000}";
		assertThat(this.http.postJson("/agent/chat", expensive, "X-Tenant-Id", "globex").status()).isEqualTo(200);
		assertThat(this.http.postJson("/agent/chat", expensive, "X-Tenant-Id", "globex").status()).isEqualTo(200);
		Answer refused = this.http.postJson("/agent/chat", expensive, "X-Tenant-Id", "globex");
		assertThat(refused.status()).isEqualTo(429);
		assertThat((List<String>) JsonPath.read(refused.body(), "$.violated-policies")).containsExactly("tenant-daily");
		assertThat(refused.headers().firstValue("Retry-After")).isPresent();
		// the next day the budget is back
		this.clock.advance(Duration.ofDays(1));
		assertThat(this.http.postJson("/agent/chat", expensive, "X-Tenant-Id", "globex").status()).isEqualTo(200);
	}

	@Test
	void chatIsRateLimitedPerTenant() throws Exception {
		String cheap = "{\"prompt\":\"hi\",\"maxTokens\":10}";
		for (int i = 0; i < 10; i++) {
			assertThat(this.http.postJson("/agent/chat", cheap, "X-Tenant-Id", "initech").status()).isEqualTo(200);
		}
		Answer refused = this.http.postJson("/agent/chat", cheap, "X-Tenant-Id", "initech");
		assertThat(refused.status()).isEqualTo(429);
		assertThat((List<String>) JsonPath.read(refused.body(), "$.violated-policies")).containsExactly("tenant-chat");
		assertThat(this.http.postJson("/agent/chat", cheap, "X-Tenant-Id", "umbrella").status()).isEqualTo(200);
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class ManualClock {

		@Bean
		ManualTimeSource rateLimitTimeSource() {
			return new ManualTimeSource();
		}

	}

}
