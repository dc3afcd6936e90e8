package dev.ratelimit.aop;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.ratelimit.support.RedisServerFixture;

/**
 * {@link FallbackTests} on the Redis backend, against the shared redis-server,
 * with the concurrency cap distributed so that its permits are Redis leases too.
 */
class RedisFallbackTests extends FallbackTests {

	static final RedisServerFixture redis = RedisServerFixture.shared();

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		redis.register(registry);
		registry.add("rate-limit.backend", () -> "redis");
		registry.add("rate-limit.redis.timeout", () -> "2s");
		registry.add("rate-limit.concurrency.single.scope", () -> "distributed");
	}

}
