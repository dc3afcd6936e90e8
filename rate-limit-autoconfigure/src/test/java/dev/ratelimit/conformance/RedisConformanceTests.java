package dev.ratelimit.conformance;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.support.RedisServerFixture;

/**
 * The conformance table on a real standalone redis-server.
 */
class RedisConformanceTests extends RedisBackedConformanceTests {

	@Override
	LettuceConnectionFactory newConnectionFactory() {
		return RedisServerFixture.shared().newConnectionFactory();
	}

}
