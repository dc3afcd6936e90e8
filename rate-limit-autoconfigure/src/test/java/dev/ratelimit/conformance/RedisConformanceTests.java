package dev.ratelimit.conformance;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.support.RedisServerFixture;

/**
 * The conformance table on a real standalone redis-server, with the scripts
 * called as functions ({@code FCALL}), as production does;
 * {@link RedisEvalShaConformanceTests} runs it as {@code EVALSHA}.
 */
class RedisConformanceTests extends RedisBackedConformanceTests {

	@Override
	LettuceConnectionFactory newConnectionFactory() {
		return RedisServerFixture.shared().newConnectionFactory();
	}

}
