package dev.ratelimit.conformance;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.redis.RedisRateLimitBackend;
import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.support.RedisServerFixture;

/**
 * The conformance table on the Redis backend, a real redis-server, with the
 * script's explicit-time argument driven by the manual clock.
 */
class RedisConformanceTests extends ConformanceTests {

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		connectionFactory = RedisServerFixture.shared().newConnectionFactory();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Override
	RateLimitBackend backend(ManualTimeSource clock) {
		return new RedisRateLimitBackend(connectionFactory, clock);
	}

}
