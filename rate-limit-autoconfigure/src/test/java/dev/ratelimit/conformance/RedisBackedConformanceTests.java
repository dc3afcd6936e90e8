package dev.ratelimit.conformance;

import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.redis.RedisStoresForTests;
import dev.ratelimit.support.ManualTimeSource;

/**
 * The conformance table on a Redis backend, with the script's explicit-time
 * argument driven by the manual clock. Subclasses say which Redis.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class RedisBackedConformanceTests extends ConformanceTests {

	private LettuceConnectionFactory connectionFactory;

	private StringRedisTemplate redis;

	/**
	 * Returns a started connection factory to the Redis under test.
	 * @return the connection factory, destroyed after the class
	 */
	abstract LettuceConnectionFactory newConnectionFactory();

	@BeforeAll
	void connect() {
		this.connectionFactory = newConnectionFactory();
		this.redis = new StringRedisTemplate(this.connectionFactory);
	}

	@AfterAll
	void disconnect() {
		this.connectionFactory.destroy();
	}

	@Override
	void afterDecision(List<String> keys) {
		keys.forEach(this.redis::persist);
	}

	@Override
	RateLimitBackend backend(ManualTimeSource clock) {
		return RedisStoresForTests.backend(this.connectionFactory, clock);
	}

}
