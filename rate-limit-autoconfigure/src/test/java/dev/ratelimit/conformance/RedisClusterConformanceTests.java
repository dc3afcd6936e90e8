package dev.ratelimit.conformance;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

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

	@BeforeAll
	static void connect() {
		connectionFactory = RedisClusterFixture.shared().newConnectionFactory();
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
