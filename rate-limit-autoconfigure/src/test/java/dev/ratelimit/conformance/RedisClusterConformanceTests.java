package dev.ratelimit.conformance;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.support.RedisClusterFixture;

/**
 * The conformance table on a real three-master Redis Cluster: every algorithm,
 * and layered decisions whose keys live in different slots.
 */
class RedisClusterConformanceTests extends RedisBackedConformanceTests {

	@Override
	LettuceConnectionFactory newConnectionFactory() {
		return RedisClusterFixture.shared().newConnectionFactory();
	}

}
