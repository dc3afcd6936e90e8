package dev.ratelimit.redis;

import java.time.Duration;

import org.springframework.beans.DirectFieldAccessor;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration.LettuceClientConfigurationBuilder;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration.LettuceSslClientConfigurationBuilder;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Gives the limiter a connection of its own to the application's Redis, with a
 * short command timeout: the application's timeout (often seconds) suits its
 * own queries, but a limiter that waits that long turns a Redis stall into a
 * stall of every request.
 */
public final class LimiterConnectionFactories {

	private LimiterConnectionFactories() {
	}

	/**
	 * Returns a connection factory to the same Redis as {@code application}, with
	 * the given command timeout. For a Lettuce factory (Spring Boot's default) this
	 * is a new, started factory copying its server configuration (standalone,
	 * Sentinel or Cluster), TLS, credentials, client options and resources; the
	 * caller destroys it. Other factories are returned as they are, with their own
	 * timeout.
	 * @param application the application's connection factory
	 * @param timeout the command timeout for limiter calls
	 * @return the limiter's connection factory
	 */
	public static RedisConnectionFactory withCommandTimeout(RedisConnectionFactory application, Duration timeout) {
		if (!(application instanceof LettuceConnectionFactory lettuce)) {
			return application;
		}
		LettuceConnectionFactory limiter = new LettuceConnectionFactory(configuration(lettuce),
				clientConfiguration(lettuce.getClientConfiguration(), timeout));
		limiter.afterPropertiesSet();
		limiter.start();
		return limiter;
	}

	private static RedisConfiguration configuration(LettuceConnectionFactory factory) {
		if (factory.isClusterAware()) {
			return factory.getClusterConfiguration();
		}
		if (factory.isRedisSentinelAware()) {
			return factory.getSentinelConfiguration();
		}
		// The factory keeps the configuration it was built with (standalone, socket,
		// static master/replica) in a field; its public getter returns a default.
		Object configuration = new DirectFieldAccessor(factory).getPropertyValue("configuration");
		if (configuration instanceof RedisConfiguration redisConfiguration) {
			return redisConfiguration;
		}
		RedisStandaloneConfiguration standalone = new RedisStandaloneConfiguration(factory.getHostName(),
				factory.getPort());
		standalone.setDatabase(factory.getDatabase());
		if (factory.getPassword() != null) {
			standalone.setPassword(factory.getPassword());
		}
		return standalone;
	}

	private static LettuceClientConfiguration clientConfiguration(LettuceClientConfiguration source,
			Duration timeout) {
		LettuceClientConfigurationBuilder builder = LettuceClientConfiguration.builder();
		if (source.isUseSsl()) {
			LettuceSslClientConfigurationBuilder ssl = builder.useSsl().verifyPeer(source.getVerifyMode());
			if (source.isStartTls()) {
				ssl.startTls();
			}
			builder = ssl.and();
		}
		source.getClientResources().ifPresent(builder::clientResources);
		source.getClientOptions().ifPresent(builder::clientOptions);
		source.getClientName().ifPresent(builder::clientName);
		source.getReadFrom().ifPresent(builder::readFrom);
		source.getRedisCredentialsProviderFactory().ifPresent(builder::redisCredentialsProviderFactory);
		return builder.commandTimeout(timeout)
			.shutdownTimeout(source.getShutdownTimeout())
			.shutdownQuietPeriod(source.getShutdownQuietPeriod())
			.build();
	}

}
