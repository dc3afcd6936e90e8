package dev.ratelimit.redis;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.resource.ClientResources;
import io.netty.util.concurrent.EventExecutorGroup;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.connection.ClusterCommandExecutor;
import org.springframework.data.redis.connection.ClusterTopologyProvider;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClusterConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionProvider;

/**
 * The limiter's Lettuce connection factory, which refuses connections until
 * the limiter's own connector has opened its shared connection once. Spring
 * Data Redis opens the shared connection lazily, on the first call, and that
 * call waits for DNS, TCP, TLS and the handshake; a request thread must never
 * be that call. Until the connector succeeds every call fails at once with a
 * {@link RedisConnectionFailureException}, so that the policies' failure modes
 * apply; afterwards the shared connection stays open
 * and Lettuce reconnects it in the background, so no later call connects.
 * <p>
 * Still a {@link LettuceConnectionFactory}, so that the backends recognise a
 * standalone server and a cluster as before.
 */
final class LimiterLettuceConnectionFactory extends LettuceConnectionFactory {

	private final Duration busyTimeout;

	private final String address;

	/** The limiter's own client resources, shut down with this factory. */
	private final ClientResources resources;

	private volatile boolean connected;

	/** Whether the connector loaded the function library, so scripts are called as functions. */
	private final AtomicBoolean functionsLoaded = new AtomicBoolean();

	/** Asks the connector to load the library again; set once, before the first connect. */
	private volatile Runnable reloadFunctions = () -> {
	};

	/** Closes what serves this factory (the connector) when it is destroyed. */
	private volatile Runnable onDestroy = () -> {
	};

	/** The shared connection's asynchronous commands, once looked up; forgotten when the connection is reset. */
	private volatile @Nullable RedisClusterAsyncCommands<byte[], byte[]> sharedCommands;

	/** Coalesces the decisions waiting for the same server; {@code null} when each goes as a call of its own. */
	private volatile @Nullable DecisionCoalescer coalescer;

	/** The connector's thread while it connects: its calls may wait the connect timeout. */
	private volatile @Nullable Thread connecting;

	LimiterLettuceConnectionFactory(RedisConfiguration configuration, LettuceClientConfiguration clientConfiguration,
			Duration busyTimeout, String address, ClientResources resources) {
		super(configuration, clientConfiguration);
		this.busyTimeout = busyTimeout;
		this.address = address;
		this.resources = resources;
	}

	@Override
	public RedisConnection getConnection() {
		requireConnected();
		return super.getConnection();
	}

	@Override
	public RedisClusterConnection getClusterConnection() {
		requireConnected();
		return super.getClusterConnection();
	}

	/**
	 * Returns the commands of the shared connection, for a call that needs no
	 * Spring connection around it (a function call): what
	 * {@link #getConnection()} would wrap, without the wrapper and its command
	 * objects made for every call. This factory always shares its connection
	 * (nothing turns {@code shareNativeConnection} off).
	 * @return the shared connection's asynchronous commands
	 * @throws org.springframework.data.redis.RedisConnectionFailureException
	 * before the connector has opened the shared connection
	 */
	RedisClusterAsyncCommands<byte[], byte[]> sharedCommands() {
		requireConnected();
		RedisClusterAsyncCommands<byte[], byte[]> found = this.sharedCommands;
		if (found == null) {
			// Looked up once: the factory hands out its shared connection under a lock, every decision would take it.
			found = isClusterAware()
					? Objects.requireNonNull(getSharedClusterConnection(), "shared cluster connection").async()
					: Objects.requireNonNull(getSharedConnection(), "shared connection").async();
			this.sharedCommands = found;
		}
		return found;
	}

	/**
	 * Closes the shared connection, as the factory does, and forgets its
	 * commands: the next call looks up the connection that replaces it.
	 */
	@Override
	public void resetConnection() {
		this.sharedCommands = null;
		super.resetConnection();
		this.sharedCommands = null;
	}

	/** Stops as the factory does, closing the shared connection; a restart looks up the new one. */
	@Override
	public void stop() {
		this.sharedCommands = null;
		super.stop();
		this.sharedCommands = null;
	}

	/**
	 * Opens the shared connection if it is not open, for the connector only:
	 * the one caller allowed to wait for a connect.
	 * @return a connection, to be closed by the caller (the shared connection stays open)
	 */
	RedisConnection connect() {
		this.connecting = Thread.currentThread();
		try {
			// Straight to the superclass: its getConnection() of a cluster calls getClusterConnection().
			return isClusterAware() ? super.getClusterConnection() : super.getConnection();
		}
		finally {
			this.connecting = null;
		}
	}

	/**
	 * Spring Data Redis waits for each reply with {@code Future.get} and the given
	 * timeout, while Lettuce's own command timeout fires on a timer that ticks
	 * every 100 ms and can be up to a tick late. So limiter calls wait the busy
	 * timeout here (a silent Redis fails them sooner, see {@link SilenceWatch});
	 * only the connector's connection, which loads the scripts, waits the
	 * connect timeout.
	 */
	@Override
	protected LettuceConnection doCreateLettuceConnection(
			@Nullable StatefulRedisConnection<byte[], byte[]> sharedConnection,
			LettuceConnectionProvider connectionProvider, long timeout, int database) {
		long wait = (Thread.currentThread() == this.connecting) ? timeout : this.busyTimeout.toMillis();
		return super.doCreateLettuceConnection(sharedConnection, connectionProvider, wait, database);
	}

	@Override
	protected LettuceClusterConnection doCreateLettuceClusterConnection(
			@Nullable StatefulRedisClusterConnection<byte[], byte[]> sharedConnection,
			LettuceConnectionProvider connectionProvider, ClusterTopologyProvider topologyProvider,
			ClusterCommandExecutor clusterCommandExecutor, Duration commandTimeout) {
		Duration wait = (Thread.currentThread() == this.connecting) ? commandTimeout : this.busyTimeout;
		return super.doCreateLettuceClusterConnection(sharedConnection, connectionProvider, topologyProvider,
				clusterCommandExecutor, wait);
	}

	/**
	 * Returns the factory's Cluster client, which keeps the slot table, once the
	 * factory has started.
	 * @return the client, or {@code null} when the factory does not talk to a
	 * cluster, has not started or has stopped
	 */
	@Nullable RedisClusterClient clusterClient() {
		if (!isClusterAware()) {
			return null;
		}
		AbstractRedisClient client;
		try {
			client = getNativeClient();
		}
		catch (IllegalStateException ex) {
			// Stopped or destroyed: the application is stopping, there is no topology to read.
			return null;
		}
		return (client instanceof RedisClusterClient cluster) ? cluster : null;
	}

	/**
	 * Returns the shared cluster connection, once the connector has opened it.
	 * @return the connection
	 * @throws org.springframework.data.redis.RedisConnectionFailureException
	 * before the connector has opened it
	 */
	StatefulRedisClusterConnection<byte[], byte[]> sharedClusterConnection() {
		requireConnected();
		return Objects.requireNonNull(getSharedClusterConnection(), "shared cluster connection");
	}

	/**
	 * Opens a connection of its own to the same server (the Sentinel master as
	 * the sentinels name it now) or cluster, with the factory's client and
	 * options, beside the shared one: for commands that must not queue the
	 * decisions behind them ({@code WAIT}). For the connector only, which may
	 * wait for a connect; the caller closes it.
	 * @return a new connection: a {@code StatefulRedisConnection}, or a
	 * {@code StatefulRedisClusterConnection} for a cluster
	 */
	StatefulConnection<byte[], byte[]> openDedicated() {
		AbstractRedisClient client = getRequiredNativeClient();
		if (client instanceof RedisClusterClient cluster) {
			return cluster.connect(ByteArrayCodec.INSTANCE);
		}
		// The client's own URI: a Sentinel URI asks the sentinels, as the shared connection does.
		return ((RedisClient) client).connect(ByteArrayCodec.INSTANCE);
	}

	/**
	 * Returns the event bus of the limiter's client resources (the
	 * application's, shared).
	 * @return the event bus
	 */
	io.lettuce.core.event.EventBus eventBus() {
		return this.resources.eventBus();
	}

	/**
	 * Returns the threads of the limiter's client resources that run scheduled
	 * work (the application's, shared).
	 * @return the executors
	 */
	EventExecutorGroup eventExecutors() {
		return this.resources.eventExecutorGroup();
	}

	/**
	 * Lets calls through from now on: the shared connection is open.
	 */
	void opened() {
		this.connected = true;
	}

	boolean isConnected() {
		return this.connected;
	}

	/**
	 * Returns whether scripts are called as the library's functions.
	 * @return whether the library is loaded
	 */
	boolean functionsLoaded() {
		return this.functionsLoaded.get();
	}

	/**
	 * Sets whether the connector loaded the library on every master.
	 * @param loaded whether it did
	 */
	void functionsLoaded(boolean loaded) {
		this.functionsLoaded.set(loaded);
	}

	/**
	 * Sends scripts as {@code EVALSHA} from now on, since a server did not have
	 * a function of the library, and has the connector load it again; only the
	 * first of the callers that saw it missing asks.
	 */
	void functionsLost() {
		if (this.functionsLoaded.compareAndSet(true, false)) {
			this.reloadFunctions.run();
		}
	}

	/**
	 * Sets what {@link #functionsLost()} runs.
	 * @param reload asks the connector to load the library again
	 */
	void onFunctionsLost(Runnable reload) {
		this.reloadFunctions = reload;
	}

	/**
	 * Sets what {@link #destroy()} also closes.
	 * @param close closes it
	 */
	void onDestroy(Runnable close) {
		this.onDestroy = close;
	}

	/**
	 * Returns what coalesces the decisions sent on this factory's connection.
	 * @return the coalescer, or {@code null} when each decision is a call of its own
	 */
	@Nullable DecisionCoalescer coalescer() {
		return this.coalescer;
	}

	/**
	 * Coalesces decisions from now on, or stops.
	 * @param coalescer the coalescer, or {@code null} for a call per decision
	 */
	void coalescer(@Nullable DecisionCoalescer coalescer) {
		this.coalescer = coalescer;
	}

	/**
	 * Returns the longest a limiter command waits for its reply.
	 * @return the limiter's busy timeout
	 */
	Duration busyTimeout() {
		return this.busyTimeout;
	}

	@Override
	public void destroy() {
		this.onDestroy.run();
		super.destroy();
		// Only what the limiter's resources made themselves: what they share with the application's stays.
		this.resources.shutdown();
	}

	private void requireConnected() {
		if (!this.connected) {
			throw new RedisConnectionFailureException("The rate limiter has not connected to Redis at " + this.address
					+ " since start-up; it keeps connecting in the background");
		}
	}

}
