package dev.ratelimit.budget;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.ratelimit.support.RedisServerFixture;

/**
 * {@link NestedRefusalTests} on the Redis backend, against the shared
 * redis-server; every test uses a tenant of its own.
 */
class RedisNestedRefusalTests extends NestedRefusalTests {

	static final RedisServerFixture redis = RedisServerFixture.shared();

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		redis.register(registry);
		registry.add("rate-limit.backend", () -> "redis");
		registry.add("rate-limit.redis.timeout", () -> "2s");
	}

}
