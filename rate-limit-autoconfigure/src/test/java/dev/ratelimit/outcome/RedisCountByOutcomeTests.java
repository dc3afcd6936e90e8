package dev.ratelimit.outcome;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.ratelimit.support.RedisServerFixture;

/**
 * {@link CountByOutcomeTests} on the Redis backend (with its deny cache and
 * silence gate in front), against the shared redis-server.
 */
class RedisCountByOutcomeTests extends CountByOutcomeTests {

	static final RedisServerFixture redis = RedisServerFixture.shared();

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		redis.register(registry);
		registry.add("rate-limit.backend", () -> "redis");
		registry.add("rate-limit.redis.timeout", () -> "2s");
	}

}
