package dev.ratelimit.redis;

import java.time.Duration;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.resource.ClientResources;

import org.springframework.beans.DirectFieldAccessor;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration.LettuceClientConfigurationBuilder;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration.LettuceSslClientConfigurationBuilder;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Gives the limiter a connection of its own to the application's Redis, with
 * timeouts of its own: the application's timeout (often seconds) suits its own
 * queries, but a limiter that waits that long turns a Redis stall into a stall
 * of every request. On that connection a call fails once Redis has sent nothing
 * for the limiter's timeout ({@link SilenceWatch}), and waits at most the busy
 * timeout in all; while it is disconnected, calls fail at once rather than
 * queue.
 * <p>
 * Opening a connection needs longer than a command: Lettuce bounds DNS, TCP,
 * TLS and the handshake together by the {@code RedisURI} timeout, which Spring
 * Data Redis sets to the client configuration's command timeout. So the
 * limiter's client configuration carries the <em>connect</em> timeout there,
 * and every command is bounded by the busy timeout through
 * {@link TimeoutOptions} (see {@link LimiterTimeoutSource}), which Lettuce
 * applies to each command, and by the caller's own wait for each reply (see
 * {@link LimiterLettuceConnectionFactory}).
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
	 * @param busyTimeout the longest a limiter command waits in all
	 * @param connectTimeout the timeout of opening a connection, handshake included
	 * @param silence the gate that tells whether Redis answers, with the silence timeout
	 * @return the limiter's connection factory
	 */
	public static RedisConnectionFactory forLimiter(RedisConnectionFactory application, Duration busyTimeout,
			Duration connectTimeout, RedisSilence silence) {
		if (!(application instanceof LettuceConnectionFactory lettuce)) {
			return application;
		}
		ClientResources resources = LimiterClientResources
			.of(lettuce.getClientConfiguration().getClientResources().orElse(null), silence, connectTimeout);
		LimiterLettuceConnectionFactory limiter = new LimiterLettuceConnectionFactory(configuration(lettuce),
				clientConfiguration(lettuce.getClientConfiguration(), resources, busyTimeout, connectTimeout),
				busyTimeout, RedisAddresses.describe(lettuce), resources);
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
			ClientResources resources, Duration busyTimeout, Duration connectTimeout) {
		LettuceClientConfigurationBuilder builder = LettuceClientConfiguration.builder();
		if (source.isUseSsl()) {
			LettuceSslClientConfigurationBuilder ssl = builder.useSsl().verifyPeer(source.getVerifyMode());
			if (source.isStartTls()) {
				ssl.startTls();
			}
			builder = ssl.and();
		}
		builder.clientResources(resources);
		source.getClientName().ifPresent(builder::clientName);
		source.getReadFrom().ifPresent(builder::readFrom);
		source.getRedisCredentialsProviderFactory().ifPresent(builder::redisCredentialsProviderFactory);
		ClientOptions options = source.getClientOptions().orElseGet(() -> ClientOptions.builder().build());
		return builder.clientOptions(clientOptions(options, busyTimeout, connectTimeout))
			// Becomes the RedisURI timeout: Lettuce's bound on opening a connection (see above).
			.commandTimeout(connectTimeout)
			.shutdownTimeout(source.getShutdownTimeout())
			.shutdownQuietPeriod(source.getShutdownQuietPeriod())
			.build();
	}

	/**
	 * Returns the application's client options (a Cluster's stay Cluster options)
	 * with the limiter's timeouts (each command at most the busy timeout, the TCP
	 * connect the connect timeout), and commands refused at once while the
	 * connection is down: queued, they would only wait for their timeout while
	 * the failure modes could decide them now.
	 */
	private static ClientOptions clientOptions(ClientOptions options, Duration busyTimeout,
			Duration connectTimeout) {
		return options.mutate()
			.disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
			.timeoutOptions(TimeoutOptions.builder()
				.timeoutCommands()
				.timeoutSource(new LimiterTimeoutSource(busyTimeout, connectTimeout))
				.build())
			.socketOptions(options.getSocketOptions().mutate().connectTimeout(connectTimeout).build())
			.build();
	}

}
