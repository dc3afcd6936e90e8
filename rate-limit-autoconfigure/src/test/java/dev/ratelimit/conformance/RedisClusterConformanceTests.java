package dev.ratelimit.conformance;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.support.RedisClusterFixture;

/**
 * The conformance table on a real three-master Redis Cluster: every algorithm,
 * and layered decisions whose keys live in different slots, with the scripts
 * called as functions ({@code FCALL}), as production does;
 * {@link RedisClusterEvalShaConformanceTests} runs it as {@code EVALSHA}.
 */
class RedisClusterConformanceTests extends RedisBackedConformanceTests {

	@Override
	LettuceConnectionFactory newConnectionFactory() {
		return RedisClusterFixture.shared().newConnectionFactory();
	}

}
