package dev.ratelimit.blocking;

import org.junit.jupiter.api.BeforeEach;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.ratelimit.support.RedisServerFixture;

/**
 * {@link NonBlockingDecisionTests} on the Redis backend, against the shared
 * redis-server: its decisions are taken off the event loop.
 */
@SpringBootTest(classes = NonBlockingDecisionTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "rate-limit.backend=redis",
				"rate-limit.policies.per-ip.capacity=3", "rate-limit.policies.per-ip.refill=1/1h",
				"rate-limit.policies.per-ip.key=ip", "rate-limit.routes[0].pattern=/api/**",
				"rate-limit.routes[0].policies=per-ip",
				"rate-limit.policies.loop.capacity=100", "rate-limit.policies.loop.refill=1/1h", "rate-limit.policies.loop.key=ip",
				"rate-limit.routes[1].pattern=/loop/**", "rate-limit.routes[1].policies=loop" })
class RedisNonBlockingDecisionTests extends NonBlockingDecisionTests {

	static final RedisServerFixture redis = RedisServerFixture.shared();

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		redis.register(registry);
	}

	/** The server is shared with the coalescing variant: each test starts with every caller's quota whole. */
	@BeforeEach
	void emptyRedis() {
		redis.flushAll();
	}

}
