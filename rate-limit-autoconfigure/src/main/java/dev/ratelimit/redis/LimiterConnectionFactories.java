package dev.ratelimit.redis;

import java.time.Duration;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.TimeoutOptions;

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
 * <p>
 * Opening a connection needs longer than a command: Lettuce bounds DNS, TCP,
 * TLS and the handshake together by the {@code RedisURI} timeout, which Spring
 * Data Redis sets to the client configuration's command timeout. So the
 * limiter's client configuration carries the <em>connect</em> timeout there,
 * and every command is bounded by the limiter's timeout through
 * {@link TimeoutOptions} (see {@link LimiterTimeoutSource}), which Lettuce
 * applies to each command, queued ones included, and by Spring Data Redis'
 * exact wait for each reply (see {@link LimiterLettuceConnectionFactory}).
 */
public final class LimiterConnectionFactories {

	private LimiterConnectionFactories() {
	}

	/**
	 * Returns a connection factory to the same Redis as {@code application}, for
	 * the limiter. For a Lettuce factory (Spring Boot's default) this is a new,
	 * started factory copying its server configuration (standalone, Sentinel or
	 * Cluster), TLS, credentials, client options and resources, that opens no
	 * connection until the limiter's connector has connected it (see
	 * {@link RedisLimiterConnection}); the caller destroys it. Other factories
	 * are returned as they are, with their own timeouts.
	 * @param application the application's connection factory
	 * @param timeout the timeout of each limiter command
	 * @param connectTimeout the timeout of opening a connection, handshake included
	 * @return the limiter's connection factory
	 */
	public static RedisConnectionFactory forLimiter(RedisConnectionFactory application, Duration timeout,
			Duration connectTimeout) {
		if (!(application instanceof LettuceConnectionFactory lettuce)) {
			return application;
		}
		LimiterLettuceConnectionFactory limiter = new LimiterLettuceConnectionFactory(configuration(lettuce),
				clientConfiguration(lettuce.getClientConfiguration(), timeout, connectTimeout), timeout,
				RedisAddresses.describe(lettuce));
		limiter.afterPropertiesSet();
		limiter.start();
		return limiter;
	}

	static RedisConfiguration configuration(LettuceConnectionFactory factory) {
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
			Duration timeout, Duration connectTimeout) {
		LettuceClientConfigurationBuilder builder = LettuceClientConfiguration.builder();
		if (source.isUseSsl()) {
			LettuceSslClientConfigurationBuilder ssl = builder.useSsl().verifyPeer(source.getVerifyMode());
			if (source.isStartTls()) {
				ssl.startTls();
			}
			builder = ssl.and();
		}
		source.getClientResources().ifPresent(builder::clientResources);
		source.getClientName().ifPresent(builder::clientName);
		source.getReadFrom().ifPresent(builder::readFrom);
		source.getRedisCredentialsProviderFactory().ifPresent(builder::redisCredentialsProviderFactory);
		ClientOptions options = source.getClientOptions().orElseGet(() -> ClientOptions.builder().build());
		return builder.clientOptions(clientOptions(options, timeout, connectTimeout))
			// Becomes the RedisURI timeout: Lettuce's bound on opening a connection (see above).
			.commandTimeout(connectTimeout)
			.shutdownTimeout(source.getShutdownTimeout())
			.shutdownQuietPeriod(source.getShutdownQuietPeriod())
			.build();
	}

	/**
	 * Returns the application's client options (a Cluster's stay Cluster options)
	 * with the limiter's timeouts: each command by the limiter's timeout, the TCP
	 * connect by the connect timeout.
	 */
	private static ClientOptions clientOptions(ClientOptions options, Duration timeout, Duration connectTimeout) {
		return options.mutate()
			.timeoutOptions(TimeoutOptions.builder()
				.timeoutCommands()
				.timeoutSource(new LimiterTimeoutSource(timeout, connectTimeout))
				.build())
			.socketOptions(options.getSocketOptions().mutate().connectTimeout(connectTimeout).build())
			.build();
	}

}
