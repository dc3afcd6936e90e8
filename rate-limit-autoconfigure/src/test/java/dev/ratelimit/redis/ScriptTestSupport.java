package dev.ratelimit.redis;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.support.RedisServerFixture;

/**
 * Shared set-up of the tests that replay timelines against the Lua scripts on
 * the shared {@code redis-server}: a clean server and a fresh
 * {@link BackendComparison} for every test.
 */
abstract class ScriptTestSupport {

	static final long MILLI = 1_000L;

	static final long SECOND = 1_000_000L;

	static final RedisServerFixture server = RedisServerFixture.shared();

	static LettuceConnectionFactory connectionFactory;

	final LimitKeys keys = new LimitKeys("rl", 128);

	BackendComparison backends;

	@BeforeAll
	static void connect() {
		connectionFactory = server.newConnectionFactory();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@BeforeEach
	void setUpBackends() {
		server.flushAll();
		this.backends = new BackendComparison(connectionFactory);
	}

	String key(RateLimitPolicy policy) {
		return this.keys.build(policy.name(), "user-42");
	}

	static RateLimitPolicy bucket(Algorithm algorithm, long capacity, String refill) {
		return RateLimitPolicy.builder("script").algorithm(algorithm).capacity(capacity).refill(refill).build();
	}

	static RateLimitPolicy window(Algorithm algorithm, long capacity, String window) {
		return RateLimitPolicy.builder("script").algorithm(algorithm).capacity(capacity).window(window).build();
	}

}
