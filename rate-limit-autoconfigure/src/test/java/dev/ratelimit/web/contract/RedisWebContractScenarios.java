package dev.ratelimit.web.contract;

import java.util.Objects;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.ratelimit.support.RedisServerFixture;

/**
 * The web contract's scenarios on a Redis of their own, which the failure-mode
 * scenario freezes: each test class's application gets a server started with
 * it and stopped after the class's tests. A subclass says only which stack it
 * runs on, with {@code rate-limit.backend=redis}.
 */
public abstract class RedisWebContractScenarios extends WebContractScenarios {

	/** The running test class's server: test classes run one after another. */
	private static @Nullable RedisServerFixture redis;

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		RedisServerFixture started = RedisServerFixture.start();
		redis = started;
		started.register(registry);
	}

	@AfterAll
	static void stopRedis() {
		if (redis != null) {
			redis.close();
			redis = null;
		}
	}

	@Override
	protected RedisServerFixture redis() {
		return Objects.requireNonNull(redis, "No Redis started for this test class");
	}

}
