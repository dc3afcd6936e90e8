package dev.ratelimit.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConverters;

import dev.ratelimit.redis.LimiterChannels.HostAndPort;

/**
 * Listens to every sentinel for {@code +switch-master} of the limiter's
 * master, so that the limiter moves to the new master as soon as Sentinel
 * names it (see {@link RedisFailovers#switched}), not when Sentinel gets round
 * to demoting the old one, seconds later: until then the old master still
 * answers as a master, and everything written there is lost when it is
 * demoted and resynchronised.
 * <p>
 * One subscription per sentinel, since any of them may be the one that leads
 * the failover, and all of them announce it (the follower takes the first).
 * Subscriptions are opened without waiting, on resources of their own that
 * share the application's threads; one that cannot open is tried again every
 * {@link #RETRY_PAUSE}, and Lettuce reconnects and subscribes again one that
 * drops. An event missed while a subscription was down is made up for by the
 * other signals (a {@code READONLY} answer, a lost connection).
 */
final class SentinelWatch implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(SentinelWatch.class);

	private static final String SWITCH_MASTER = "+switch-master";

	/** How long before a subscription that could not open is tried again. */
	static final Duration RETRY_PAUSE = Duration.ofSeconds(1);

	private final String master;

	private final List<RedisURI> sentinels;

	private final ClientResources resources;

	private final RedisClient client;

	private final RedisFailovers failovers;

	private final List<StatefulRedisPubSubConnection<String, String>> subscriptions = new CopyOnWriteArrayList<>();

	private volatile boolean closed;

	/**
	 * Creates the watch; nothing is opened before {@link #start()}.
	 * @param configuration the Sentinel configuration the limiter's connection follows
	 * @param client the limiter's client configuration (TLS, client name)
	 * @param application the application's client resources, or {@code null}
	 * @param connectTimeout the timeout of opening a subscription
	 * @param failovers told of each switch
	 */
	SentinelWatch(RedisSentinelConfiguration configuration, LettuceClientConfiguration client,
			@Nullable ClientResources application, Duration connectTimeout, RedisFailovers failovers) {
		RedisURI uri = LettuceConverters.sentinelConfigurationToRedisURI(configuration);
		this.master = uri.getSentinelMasterId();
		this.sentinels = uri.getSentinels();
		for (RedisURI sentinel : this.sentinels) {
			// As Spring Data Redis sets up the sentinels of its own connection.
			client.getClientName().ifPresent(sentinel::setClientName);
			sentinel.setSsl(client.isUseSsl());
			sentinel.setVerifyPeer(client.getVerifyMode());
			sentinel.setStartTls(client.isStartTls());
			sentinel.setTimeout(connectTimeout);
		}
		this.resources = LimiterClientResources.forEvents(application);
		this.client = RedisClient.create(this.resources);
		this.failovers = failovers;
	}

	/**
	 * Returns the sentinels' addresses as configured.
	 * @return the addresses
	 */
	List<HostAndPort> addresses() {
		return this.sentinels.stream().map((uri) -> new HostAndPort(uri.getHost(), uri.getPort())).toList();
	}

	/**
	 * Subscribes to every sentinel, without waiting.
	 */
	void start() {
		for (RedisURI sentinel : this.sentinels) {
			subscribe(sentinel);
		}
	}

	private void subscribe(RedisURI sentinel) {
		if (this.closed) {
			return;
		}
		this.client.connectPubSubAsync(StringCodec.UTF8, sentinel).whenComplete((connection, failure) -> {
			if (failure != null) {
				if (logger.isDebugEnabled()) {
					logger.debug("Rate limiter could not subscribe to sentinel " + address(sentinel) + "; next attempt in "
							+ RETRY_PAUSE.toMillis() + " ms: " + failure);
				}
				retry(sentinel);
				return;
			}
			if (this.closed) {
				connection.closeAsync();
				return;
			}
			this.subscriptions.add(connection);
			connection.addListener(new RedisPubSubAdapter<>() {

				@Override
				public void message(String channel, String message) {
					heard(address(sentinel), message);
				}

			});
			// Lettuce subscribes again after each reconnect of this connection.
			connection.async().subscribe(SWITCH_MASTER);
		});
	}

	private void retry(RedisURI sentinel) {
		try {
			this.resources.eventExecutorGroup()
				.schedule(() -> subscribe(sentinel), RETRY_PAUSE.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (RuntimeException ex) {
			// The executors are shutting down: the application is stopping.
		}
	}

	/**
	 * Reads a {@code +switch-master} message: the master's name, the old address
	 * and the new one.
	 * @param sentinel the sentinel that sent it
	 * @param message {@code <name> <old-ip> <old-port> <new-ip> <new-port>}
	 */
	void heard(String sentinel, String message) {
		String[] parts = message.split(" ");
		if (parts.length != 5 || !parts[0].equals(this.master)) {
			return;
		}
		try {
			this.failovers.switched(this.master, new HostAndPort(parts[1], Integer.parseInt(parts[2])),
					new HostAndPort(parts[3], Integer.parseInt(parts[4])), sentinel);
		}
		catch (NumberFormatException ex) {
			logger.debug("Ignored a +switch-master message the rate limiter could not read: " + message);
		}
	}

	private static String address(RedisURI sentinel) {
		return sentinel.getHost() + ":" + sentinel.getPort();
	}

	@Override
	public void close() {
		this.closed = true;
		for (StatefulRedisPubSubConnection<String, String> connection : this.subscriptions) {
			connection.closeAsync();
		}
		this.client.shutdownAsync(0, 2, TimeUnit.SECONDS);
		this.resources.shutdown(0, 2, TimeUnit.SECONDS);
	}

}
