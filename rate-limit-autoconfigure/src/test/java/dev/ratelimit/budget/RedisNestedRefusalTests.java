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
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", redis::port);
		registry.add("rate-limit.backend", () -> "redis");
		registry.add("rate-limit.redis.timeout", () -> "2s");
	}

}
