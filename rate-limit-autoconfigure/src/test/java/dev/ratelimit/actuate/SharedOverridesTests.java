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

/**
 * Two instances sharing one redis-server: an override made through the
 * endpoint on one is enforced by the other within one second, a third instance
 * started afterwards has it from its start, and a removal propagates too.
 */
class SharedOverridesTests {

	private static final RedisServerFixture redis = RedisServerFixture.start();

	private static final Duration PROPAGATION = Duration.ofSeconds(1);

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@Test
	void anOverrideMadeOnOneInstanceIsEnforcedByEveryInstanceAndOutlivesARestart() {
		redis.flushAll();
		try (ConfigurableApplicationContext a = start(); ConfigurableApplicationContext b = start()) {
			TestHttp onA = TestHttp.of(a);
			TestHttp onB = TestHttp.of(b);
			assertThat(allowed(onB, "before")).isEqualTo(3);

			long start = System.nanoTime();
			Answer set = onA.postJson("/actuator/ratelimits/per-user", "{\"capacity\": 1}");
			assertThat(set.status()).as(set.body()).isEqualTo(200);
			assertThat(set.json().get("shared").asBoolean()).isTrue();
			Duration took = awaitEffectiveCapacity(onB, 1, start);
			System.out.println("Override propagated from instance A to instance B in " + took.toMillis() + " ms");
			assertThat(took).isLessThan(PROPAGATION);
			assertThat(allowed(onB, "after")).isEqualTo(1);

			try (ConfigurableApplicationContext c = start()) {
				TestHttp onC = TestHttp.of(c);
				assertThat(overrides(onC).at("/(limit)/capacity").asLong()).isEqualTo(1);
				assertThat(allowed(onC, "restarted")).isEqualTo(1);
			}

			start = System.nanoTime();
			assertThat(onA.delete("/actuator/ratelimits/per-user").status()).isEqualTo(200);
			took = awaitEffectiveCapacity(onB, 3, start);
			System.out.println("Removal propagated from instance A to instance B in " + took.toMillis() + " ms");
			assertThat(took).isLessThan(PROPAGATION);
			assertThat(allowed(onB, "removed")).isEqualTo(3);
		}
	}

	@Test
	void aMalformedEntryWrittenByHandIsIgnoredAndTheOthersApply() {
		redis.flushAll();
		redis.call("HSET", "rl:{%overrides}", "per-user:", "capacity=lots");
		redis.call("HSET", "rl:{%overrides}", "tenant-daily:", "amount=0.5");
		redis.call("HSET", "rl:{%overrides}", "no-colon", "capacity=1");
		try (ConfigurableApplicationContext a = start()) {
			TestHttp onA = TestHttp.of(a);
			assertThat(overrides(onA).isEmpty()).isTrue();
			assertThat(onA.get("/actuator/ratelimits/tenant-daily").json().at("/effective/amount").asString())
				.isEqualTo("0.5");
		}
		finally {
			redis.flushAll();
		}
	}

	private static Duration awaitEffectiveCapacity(TestHttp client, long capacity, long startNanos) {
		long deadline = startNanos + Duration.ofSeconds(5).toNanos();
		while (System.nanoTime() < deadline) {
			JsonNode overrides = client.get("/actuator/ratelimits/per-user").json();
			if (overrides.at("/effective/capacity").asLong() == capacity) {
				return Duration.ofNanos(System.nanoTime() - startNanos);
			}
			Thread.onSpinWait();
		}
		throw new AssertionError("Capacity " + capacity + " did not reach the other instance within 5 s");
	}

	private static JsonNode overrides(TestHttp client) {
		return client.get("/actuator/ratelimits/per-user").json().get("overrides");
	}

	private static int allowed(TestHttp client, String user) {
		int allowed = 0;
		while (allowed < 10 && client.get("/api/items", "X-User-Id", user).status() == 200) {
			allowed++;
		}
		return allowed;
	}


	private static ConfigurableApplicationContext start() {
		return new SpringApplicationBuilder(ActuatorTestApplication.class).web(WebApplicationType.SERVLET)
			.properties("server.port=0", "management.endpoints.web.exposure.include=ratelimits",
					"management.endpoint.ratelimits.access=unrestricted", "spring.web.error.include-message=always",
					"rate-limit.backend=redis", "spring.data.redis.host=127.0.0.1",
					"spring.data.redis.port=" + redis.port(), "rate-limit.policies.per-user.capacity=3",
					"rate-limit.policies.per-user.refill=3/1h", "rate-limit.policies.per-user.key=header('X-User-Id')",
					"rate-limit.routes[0].pattern=/api/**", "rate-limit.routes[0].policies=per-user",
					"rate-limit.budgets.tenant-daily.unit=USD", "rate-limit.budgets.tenant-daily.amount=1.00",
					"rate-limit.budgets.tenant-daily.window=day",
					"rate-limit.budgets.tenant-daily.key=header('X-Tenant-Id')")
			.run();
	}

}
