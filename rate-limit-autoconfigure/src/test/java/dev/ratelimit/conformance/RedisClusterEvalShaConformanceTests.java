package dev.ratelimit.conformance;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.support.RedisClusterFixture;

/**
 * The conformance table on a real three-master Redis Cluster with the scripts
 * sent as {@code EVALSHA}, as they are where Redis refuses functions:
 * {@link RedisClusterConformanceTests} runs the same table as {@code FCALL}.
 */
class RedisClusterEvalShaConformanceTests extends RedisBackedConformanceTests {

	@Override
	LettuceConnectionFactory newConnectionFactory() {
		return RedisClusterFixture.shared().newEvalShaConnectionFactory();
	}

}
