package dev.ratelimit.autoconfigure;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitConfigurationException;
import dev.ratelimit.redis.RedisRateLimitBackend;

/**
 * The Redis backend, chosen with {@code rate-limit.backend=redis}. It runs on
 * the application's own {@link RedisConnectionFactory}, so standalone, Sentinel
 * and Cluster set-ups configured with {@code spring.data.redis.*} all work.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(prefix = "rate-limit", name = "backend", havingValue = "redis")
@ConditionalOnClass(name = "org.springframework.data.redis.connection.RedisConnectionFactory")
class RedisBackendConfiguration {

	private static final String ACTION = "Add spring-boot-starter-data-redis and configure spring.data.redis.* "
			+ "(or define a RedisConnectionFactory bean), or set rate-limit.backend=memory.";

	@Bean
	@ConditionalOnMissingBean
	RateLimitBackend rateLimitBackend(ObjectProvider<RedisConnectionFactory> connectionFactory) {
		RedisConnectionFactory factory = connectionFactory.getIfUnique();
		if (factory == null) {
			boolean several = connectionFactory.stream().findAny().isPresent();
			throw new RateLimitConfigurationException("rate-limit.backend=redis but "
					+ (several ? "several RedisConnectionFactory beans exist and none is primary"
							: "no RedisConnectionFactory bean exists"),
					several ? "Mark the connection factory the limiter should use as @Primary." : ACTION, null);
		}
		return new RedisRateLimitBackend(factory, null);
	}

	/**
	 * Fails start-up when the Redis backend is chosen but Spring Data Redis is not
	 * on the classpath.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(prefix = "rate-limit", name = "backend", havingValue = "redis")
	@ConditionalOnMissingClass("org.springframework.data.redis.connection.RedisConnectionFactory")
	static class RedisMissing {

		@Bean
		@ConditionalOnMissingBean
		RateLimitBackend rateLimitBackend() {
			throw new RateLimitConfigurationException(
					"rate-limit.backend=redis but Spring Data Redis is not on the classpath", ACTION, null);
		}

	}

}
