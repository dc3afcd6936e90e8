package dev.ratelimit.conformance;

import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.redis.RedisRateLimitBackend;
import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.support.RedisClusterFixture;

/**
 * The conformance table on a real three-master Redis Cluster: every algorithm,
 * and layered decisions whose keys live in different slots.
 */
class RedisClusterConformanceTests extends ConformanceTests {

	private static LettuceConnectionFactory connectionFactory;

	private static StringRedisTemplate redis;

	@BeforeAll
	static void connect() {
		connectionFactory = RedisClusterFixture.shared().newConnectionFactory();
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
