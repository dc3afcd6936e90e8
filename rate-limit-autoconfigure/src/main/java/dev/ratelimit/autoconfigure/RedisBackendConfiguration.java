package dev.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import dev.ratelimit.core.LimitListener;
import dev.ratelimit.LimitRegistry;
import dev.ratelimit.budget.BudgetStore;
import dev.ratelimit.concurrency.DistributedConcurrencyLimiter;
import dev.ratelimit.concurrency.LocalConcurrencyLimiter;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitConfigurationException;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.prefetch.PrefetchingBackend;
import dev.ratelimit.redis.RedisBudgetStore;
import dev.ratelimit.redis.RedisLimiterConnection;
import dev.ratelimit.redis.RedisOverrideStore;
import dev.ratelimit.redis.RedisPauseStore;
import dev.ratelimit.client.LocalPauseStore;
import dev.ratelimit.client.PauseStore;
import dev.ratelimit.live.OverrideStore;
import dev.ratelimit.redis.RedisPermitStore;
import dev.ratelimit.redis.RedisRateLimitBackend;
import dev.ratelimit.resilience.DenyCachingBackend;

/**
 * The Redis backend, chosen with {@code rate-limit.backend=redis}. It connects
 * to the Redis of the application's own {@link RedisConnectionFactory}, so
 * standalone, Sentinel and Cluster set-ups configured with
 * {@code spring.data.redis.*} all work, with timeouts of its own and a gate that
 * fails calls at once while Redis does not answer (see
 * {@link dev.ratelimit.redis.RedisSilence}).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(prefix = "rate-limit", name = "backend", havingValue = "redis")
@ConditionalOnClass(name = "org.springframework.data.redis.connection.RedisConnectionFactory")
class RedisBackendConfiguration {

	private static final String ACTION = "Add spring-boot-starter-data-redis and configure spring.data.redis.* "
			+ "(or define a RedisConnectionFactory bean), or set rate-limit.backend=memory.";

	@Bean
	@ConditionalOnMissingBean({ RedisLimiterConnection.class, RateLimitBackend.class })
	RedisLimiterConnection rateLimitRedisConnection(ObjectProvider<RedisConnectionFactory> connectionFactory,
			RateLimitProperties properties) {
		RedisConnectionFactory factory = connectionFactory.getIfUnique();
		if (factory == null) {
			boolean several = connectionFactory.stream().findAny().isPresent();
			throw new RateLimitConfigurationException("rate-limit.backend=redis but "
					+ (several ? "several RedisConnectionFactory beans exist and none is primary"
							: "no RedisConnectionFactory bean exists"),
					several ? "Mark the connection factory the limiter should use as @Primary." : ACTION, null);
		}
		RateLimitProperties.Redis redis = properties.getRedis();
		RedisLimiterConnection connection = new RedisLimiterConnection(factory, redis.getTimeout(),
				redis.getBusyTimeout(), redis.getConnectTimeout(), redis.isFunctions(),
				durability(redis.getDurability(), redis.getConnectTimeout()), redis.getTopologyRefreshPeriod(),
				coalescing(redis.getCoalescing()));
		try {
			// Here, while the application starts: the first decisions then run on Redis, not on a lazy connect.
			connection.connect();
		}
		catch (RuntimeException ex) {
			// Redis refused the scripts: the application stops, and nothing of the connection may outlive it.
			connection.close();
			throw ex;
		}
		return connection;
	}

	private static RedisLimiterConnection.Coalescing coalescing(RateLimitProperties.Coalescing properties) {
		if (properties.getMaxBatch() < 1) {
			throw new RateLimitConfigurationException(
					"rate-limit.redis.coalescing.max-batch is " + properties.getMaxBatch()
							+ ": a call carries at least one decision",
					"Set rate-limit.redis.coalescing.max-batch to 1 or more (128 by default), or turn coalescing "
							+ "off with rate-limit.redis.coalescing.enabled=false.",
					null);
		}
		return new RedisLimiterConnection.Coalescing(properties.isEnabled(), properties.getMaxBatch());
	}

	/** The kinds whose writes wait for replicas, with how many and how long. */
	private static RedisLimiterConnection.Durability durability(RateLimitProperties.Durability properties,
			Duration connectTimeout) {
		Set<LimitKind> kinds = EnumSet.noneOf(LimitKind.class);
		if (properties.getRateLimits() == RateLimitProperties.Acknowledgement.REPLICATED) {
			kinds.add(LimitKind.RATE_LIMIT);
		}
		if (properties.getBudgets() == RateLimitProperties.Acknowledgement.REPLICATED) {
			kinds.add(LimitKind.BUDGET);
		}
		if (properties.getConcurrency() == RateLimitProperties.Acknowledgement.REPLICATED) {
			kinds.add(LimitKind.CONCURRENCY);
		}
		// The wait is watched with the connect timeout (see ReplicaAcks): it must end well within it.
		Duration half = connectTimeout.dividedBy(2);
		Duration timeout = (properties.getTimeout().compareTo(half) > 0) ? half : properties.getTimeout();
		return new RedisLimiterConnection.Durability(kinds, properties.getReplicas(), timeout);
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitBackend rateLimitBackend(RedisLimiterConnection connection, RateLimitProperties properties,
			TimeSource timeSource, LimitRegistry limits) {
		RateLimitBackend redis = new RedisRateLimitBackend(connection);
		if (limits.rateLimits().all().stream().anyMatch((policy) -> policy.prefetch() > 0)) {
			// Inside the deny cache: a prefetch's denial is the backend's, cached like any other.
			redis = new PrefetchingBackend(redis, timeSource, properties.getRedis().getPrefetch().getMaxKeys());
		}
		if (properties.getRedis().getDenyCache().isEnabled()) {
			// Outermost: a key denied until a time stays denied locally, Redis answering or not.
			redis = new DenyCachingBackend(redis, timeSource, properties.getRedis().getDenyCache().getMaxKeys());
		}
		return redis;
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(RedisLimiterConnection.class)
	@ConditionalOnConfigured("rate-limit.budgets")
	BudgetStore rateLimitBudgetStore(RedisLimiterConnection connection) {
		return new RedisBudgetStore(connection);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(RedisLimiterConnection.class)
	OverrideStore rateLimitOverrideStore(RedisLimiterConnection connection, RateLimitProperties properties) {
		return new RedisOverrideStore(connection, properties.getKeyPrefix());
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(RedisLimiterConnection.class)
	@ConditionalOnConfigured("rate-limit.clients")
	PauseStore rateLimitPauseStore(RedisLimiterConnection connection, RateLimitProperties properties,
			TimeSource timeSource) {
		return new RedisPauseStore(connection, properties.getKeyPrefix(),
				new LocalPauseStore(timeSource));
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	@ConditionalOnBean(RedisLimiterConnection.class)
	DistributedConcurrencyLimiter rateLimitDistributedConcurrencyLimiter(RedisLimiterConnection connection,
			LimitKeys keys, LocalConcurrencyLimiter local, ObjectProvider<LimitListener> listeners) {
		return new DistributedConcurrencyLimiter(new RedisPermitStore(connection), keys,
				local, LimitListener.of(listeners.orderedStream().toList()));
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
