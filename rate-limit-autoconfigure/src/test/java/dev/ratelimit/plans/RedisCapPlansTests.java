package dev.ratelimit.plans;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.ratelimit.support.RedisServerFixture;

/**
 * {@link CapPlansTests} on a distributed cap, against a real {@code redis-server}.
 */
@SpringBootTest(classes = CapPlansTests.App.class,
		properties = { "rate-limit.concurrency.runs.permits=2", "rate-limit.concurrency.runs.key=#key",
				"rate-limit.concurrency.runs.scope=distributed",
				"rate-limit.concurrency.runs.overrides.partner.permits=4" })
class RedisCapPlansTests extends CapPlansTests {

	private static final RedisServerFixture redis = RedisServerFixture.shared();

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		redis.register(registry);
		registry.add("rate-limit.backend", () -> "redis");
	}

}
