package dev.ratelimit.gateway;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.redis.ClockedRedisBackend;
import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.support.RedisServerFixture;

/**
 * {@link GatewayAlgorithmsTests} on Redis: a real redis-server, the Redis
 * backend's wiring ({@code rate-limit.backend=redis}, with reactive Redis and
 * so the gateway's own {@code RedisRateLimiter} beside the starter's limiter),
 * and the starter's Lua scripts, each given the time of the test's clock
 * (production passes none, and the scripts read the server's {@code TIME}).
 * Every key of the tests is new, so the shared server is not flushed.
 */
@Import(RedisGatewayAlgorithmsTests.ClockedRedis.class)
class RedisGatewayAlgorithmsTests extends GatewayAlgorithmsTests {

	static final RedisServerFixture redis = RedisServerFixture.shared();

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("rate-limit.backend", () -> "redis");
		redis.register(registry);
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class ClockedRedis {

		@Bean
		ClockedConnection rateLimitClockedConnection() {
			return new ClockedConnection(redis.newConnectionFactory());
		}

		/** Replaces the Redis backend's, on a connection of its own. */
		@Bean
		RateLimitBackend rateLimitBackend(ClockedConnection connection, ManualTimeSource clock) {
			return ClockedRedisBackend.create(connection.factory, clock);
		}

	}

	/**
	 * The clocked backend's connection, closed with the context: not a
	 * connection factory bean, so that Spring Boot's stays the only one.
	 */
	static final class ClockedConnection implements DisposableBean {

		final LettuceConnectionFactory factory;

		ClockedConnection(LettuceConnectionFactory factory) {
			this.factory = factory;
		}

		@Override
		public void destroy() {
			this.factory.destroy();
		}

	}

}
