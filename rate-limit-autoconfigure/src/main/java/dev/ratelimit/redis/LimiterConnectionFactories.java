package dev.ratelimit.redis;

import java.time.Duration;
import java.util.Objects;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions.RefreshTrigger;
import io.lettuce.core.resource.ClientResources;
import org.jspecify.annotations.Nullable;

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
 * <p>
 * On a Redis Cluster the limiter's connection follows the topology whatever
 * the application's client options say (Spring Boot's default refreshes
 * nothing, so a killed master's slots are never followed): it refreshes on
 * the adaptive triggers that say the topology moved ({@code MOVED},
 * {@code ASK}, an uncovered slot, an unknown node) at most every
 * {@link #ADAPTIVE_REFRESH_TIMEOUT} (Lettuce's default of 30 s drops every
 * trigger inside it, which kept a failed-over shard's slots on the dead master
 * for 17 s), periodically, and on demand while calls on a node fail (see
 * {@link ClusterParts}). Not on every reconnect attempt to a node: a dead node
 * is tried every half second for as long as it stays in the cluster's view,
 * and each refresh that cannot reach it logs a warning of Lettuce's own.
 */
public final class LimiterConnectionFactories {

	/** The default of {@code rate-limit.redis.topology-refresh-period}. */
	public static final Duration DEFAULT_REFRESH_PERIOD = Duration.ofSeconds(10);

	/** The least time between two refreshes an adaptive trigger starts. */
	static final Duration ADAPTIVE_REFRESH_TIMEOUT = Duration.ofMillis(500);

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
		return forLimiter(application, busyTimeout, connectTimeout, silence, new LimiterChannels(),
				DEFAULT_REFRESH_PERIOD);
	}

	/**
	 * Returns a connection factory to the same Redis as {@code application}, for
	 * the limiter, like {@link #forLimiter(RedisConnectionFactory, Duration, Duration, RedisSilence)}.
	 * @param application the application's connection factory
	 * @param busyTimeout the longest a limiter command waits in all
	 * @param connectTimeout the timeout of opening a connection, handshake included
	 * @param silence the gate that tells whether Redis answers, with the silence timeout
	 * @param channels registers every channel of the limiter's connections
	 * @param refreshPeriod how often a Cluster's topology is read when nothing triggered a refresh
	 * @return the limiter's connection factory
	 */
	static RedisConnectionFactory forLimiter(RedisConnectionFactory application, Duration busyTimeout,
			Duration connectTimeout, RedisSilence silence, LimiterChannels channels, Duration refreshPeriod) {
		if (!(application instanceof LettuceConnectionFactory lettuce)) {
			return application;
		}
		ClientResources resources = LimiterClientResources
			.of(lettuce.getClientConfiguration().getClientResources().orElse(null), silence, connectTimeout, channels);
		LimiterLettuceConnectionFactory limiter = new LimiterLettuceConnectionFactory(configuration(lettuce),
				clientConfiguration(lettuce.getClientConfiguration(), resources, busyTimeout, connectTimeout,
						lettuce.isClusterAware() ? refreshPeriod : null),
				busyTimeout, RedisAddresses.describe(lettuce), resources);
		limiter.afterPropertiesSet();
		limiter.start();
		return limiter;
	}

	static RedisConfiguration configuration(LettuceConnectionFactory factory) {
		if (factory.isClusterAware()) {
			return Objects.requireNonNull(factory.getClusterConfiguration(), "a cluster-aware factory has its cluster");
		}
		if (factory.isRedisSentinelAware()) {
			return Objects.requireNonNull(factory.getSentinelConfiguration(), "sentinel-aware: has sentinels");
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
			ClientResources resources, Duration busyTimeout, Duration connectTimeout,
			@Nullable Duration clusterRefreshPeriod) {
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
		ClientOptions limiterOptions = clientOptions(options, busyTimeout, connectTimeout);
		if (clusterRefreshPeriod != null) {
			limiterOptions = following(limiterOptions, clusterRefreshPeriod);
		}
		return builder.clientOptions(limiterOptions)
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

	/**
	 * Returns Cluster client options that follow the topology: the adaptive
	 * triggers of a moved topology, at most one refresh per
	 * {@link #ADAPTIVE_REFRESH_TIMEOUT}, and a periodic one; the application's
	 * choice of refresh sources and redirects is kept.
	 */
	private static ClusterClientOptions following(ClientOptions options, Duration refreshPeriod) {
		ClusterClientOptions cluster = (options instanceof ClusterClientOptions own) ? own
				: ClusterClientOptions.builder(options).build();
		ClusterTopologyRefreshOptions refresh = ClusterTopologyRefreshOptions.builder()
			.enableAdaptiveRefreshTrigger(RefreshTrigger.MOVED_REDIRECT, RefreshTrigger.ASK_REDIRECT,
					RefreshTrigger.UNCOVERED_SLOT, RefreshTrigger.UNKNOWN_NODE)
			.adaptiveRefreshTriggersTimeout(ADAPTIVE_REFRESH_TIMEOUT)
			.enablePeriodicRefresh(refreshPeriod)
			.dynamicRefreshSources(cluster.getTopologyRefreshOptions().useDynamicRefreshSources())
			.closeStaleConnections(true)
			.build();
		return cluster.mutate().topologyRefreshOptions(refresh).build();
	}

}
