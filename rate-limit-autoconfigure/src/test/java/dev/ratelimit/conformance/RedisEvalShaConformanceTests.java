package dev.ratelimit.conformance;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.support.RedisServerFixture;

/**
 * The conformance table on a real standalone redis-server with the scripts
 * sent as {@code EVALSHA}, as they are where Redis refuses functions:
 * {@link RedisConformanceTests} runs the same table as {@code FCALL}.
 */
class RedisEvalShaConformanceTests extends RedisBackedConformanceTests {

	@Override
	LettuceConnectionFactory newConnectionFactory() {
		return RedisServerFixture.shared().newEvalShaConnectionFactory();
	}

}
