package dev.ratelimit.plans;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.ratelimit.support.RedisServerFixture;

/**
 * {@link PlansWebTests} on the Redis backend, against a real {@code redis-server}.
 */
@SpringBootTest(classes = PlansWebTests.App.class)
class RedisPlansWebTests extends PlansWebTests {

	private static final RedisServerFixture redis = RedisServerFixture.shared();

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		redis.register(registry);
		registry.add("rate-limit.backend", () -> "redis");
	}

}
