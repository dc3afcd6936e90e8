package dev.ratelimit.conformance;

import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

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

	private static StringRedisTemplate redis;

	@BeforeAll
	static void connect() {
		connectionFactory = RedisServerFixture.shared().newConnectionFactory();
		redis = new StringRedisTemplate(connectionFactory);
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Override
	void afterDecision(List<String> keys) {
		keys.forEach(redis::persist);
	}

	@Override
	RateLimitBackend backend(ManualTimeSource clock) {
		return new RedisRateLimitBackend(connectionFactory, clock);
	}

}
