package dev.ratelimit.sample.reactive;

import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.support.RedisServerFixture;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two instances of the reactive sample sharing one real Redis, over real HTTP:
 * what one instance takes, the other sees, for each kind of limit — an
 * annotated {@code Mono} handler, a {@code Flux} one, the route rule and a
 * streamed budget. Refills are slowed to hours so that the test does not
 * depend on how fast it runs (Redis keeps time with its own clock).
 */
class ReactiveSampleRedisHttpTests {

	static final RedisServerFixture redis = RedisServerFixture.shared();

	static ConfigurableApplicationContext first;

	static ConfigurableApplicationContext second;

	@BeforeAll
	static void startTwoInstances() {
		first = start();
		second = start();
	}

	@AfterAll
	static void stop() {
		second.close();
		first.close();
	}

	private static ConfigurableApplicationContext start() {
		return new SpringApplicationBuilder(ReactiveSampleApplication.class).run("--server.port=0",
				"--rate-limit.backend=redis", "--spring.data.redis.host=127.0.0.1",
				"--spring.data.redis.port=" + redis.port(), "--rate-limit.policies.agent-runs.plans.free.refill=5/5h",
				"--rate-limit.policies.per-ip.refill=20/2h", "--rate-limit.budgets.tenant-daily.amount=0.000010");
	}

	@BeforeEach
	void flush() {
		redis.flushAll();
	}

	@Test
	void bothInstancesDecideOnRedis() {
		assertThat(first.getBean(RateLimitBackend.class).blocks()).isTrue();
		assertThat(client(first).post("/agent/run", null, "X-User-Id", "zed").status()).isEqualTo(200);
		assertThat(redis.call("EXISTS", "rl:agent-runs:{zed}")).isEqualTo(":1");
	}

	@Test
	void anAnnotatedMonoHandlerIsLimitedAcrossInstances() {
		String[] alice = { "X-User-Id", "alice" };
		for (int i = 0; i < 3; i++) {
			assertThat(client(first).post("/agent/run", null, alice).status()).isEqualTo(200);
		}
		for (int i = 0; i < 2; i++) {
			assertThat(client(second).post("/agent/run", null, alice).status()).isEqualTo(200);
		}
		Answer refused = client(first).post("/agent/run", null, alice);
		assertThat(refused.status()).isEqualTo(429);
		assertThat(refused.retryAfter()).isEqualTo("3600");
		assertThat(refused.body()).contains("\"violated-policies\":[\"agent-runs\"]");
		assertThat(client(second).post("/agent/run", null, alice).status()).isEqualTo(429);
	}

	@Test
	void anAnnotatedFluxHandlerIsLimitedAcrossInstances() {
		String[] carol = { "X-User-Id", "carol" };
		assertThat(client(first).get("/agent/stream", carol).body()).contains("done");
		assertThat(client(second).get("/agent/stream", carol).status()).isEqualTo(200);
		assertThat(client(first).get("/agent/stream", carol).status()).isEqualTo(429);
	}

	@Test
	void theRouteRuleIsLimitedAcrossInstances() {
		for (int i = 0; i < 10; i++) {
			assertThat(client(first).get("/api/hello").status()).isEqualTo(200);
			assertThat(client(second).get("/api/hello").status()).isEqualTo(200);
		}
		Answer refused = client(second).get("/api/hello");
		assertThat(refused.status()).isEqualTo(429);
		assertThat(refused.retryAfter()).isEqualTo("360");
		assertThat(refused.rateLimit()).isEqualTo("\"per-ip\";r=0;t=7200");
	}

	@Test
	void aStreamedBudgetIsSharedAcrossInstances() {
		// 10 micro-dollars a day: a stream of 3 tokens on one instance spends 6 of them.
		String[] acme = { "X-Tenant-Id", "acme" };
		Answer streamed = client(first).postJson("/agent/chat/stream",
				TestHttp.json(new ChatRequest("one two three", 3)), acme);
		assertThat(streamed.body()).contains("event:done");
		await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(spent(second, "acme")).isEqualTo(6));
		// The other instance sees the 4 left: an estimate of 6 no longer fits, 2 do.
		Answer refused = client(second).postJson("/agent/chat/stream",
				TestHttp.json(new ChatRequest("four five six", 3)), acme);
		assertThat(refused.status()).isEqualTo(429);
		assertThat(refused.body()).contains("tenant-daily");
		Answer fits = client(second).postJson("/agent/chat/stream",
				TestHttp.json(new ChatRequest("four five six", 1)), acme);
		assertThat(fits.body()).contains("data:four").doesNotContain("data:five").contains("event:budget-exceeded");
		await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(spent(first, "acme")).isEqualTo(8));
	}

	private static long spent(ConfigurableApplicationContext instance, String tenant) {
		CostBudgets budgets = instance.getBean(CostBudgets.class);
		BudgetDecision state = budgets.remaining(
				instance.getBean(LimitRegistry.class).budgets().find("tenant-daily").orElseThrow(), tenant);
		assertThat(state.reservedMicros()).isZero();
		return state.spentMicros()[0];
	}

	private static TestHttp client(ConfigurableApplicationContext instance) {
		return TestHttp.of(instance);
	}

}
