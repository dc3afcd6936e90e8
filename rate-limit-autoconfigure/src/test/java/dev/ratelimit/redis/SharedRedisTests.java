package dev.ratelimit.redis;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.support.RedisServerFixture;

/**
 * Set-up shared by the tests that run against the shared {@code redis-server}:
 * one connection factory per test class, and an empty server before every
 * test.
 */
abstract class SharedRedisTests {

	static final RedisServerFixture server = RedisServerFixture.shared();

	static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		connectionFactory = server.newConnectionFactory();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@BeforeEach
	void emptyServer() {
		server.flushAll();
	}

}
