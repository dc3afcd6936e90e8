package dev.ratelimit.redis;

import java.time.Duration;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import io.lettuce.core.cluster.event.ClusterTopologyChangedEvent;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.StoreParts;

/**
 * The limiter's own connection to the application's Redis, with the limiter's
 * command and connect timeouts (see {@link LimiterConnectionFactories}).
 * Deliberately not a {@link RedisConnectionFactory} bean itself, so that it
 * never competes with the application's factory for injection. Closing it
 * stops connecting and closes the connection if it is the limiter's own.
 * <p>
 * {@link #connect()} connects and loads the limiter's scripts, waiting at
 * most the connect timeout; called while the application starts, it makes the
 * first decisions run on Redis rather than wait for a lazy connect. When Redis
 * does not answer in time the application starts anyway and the connection
 * keeps trying in the background. With Lettuce (Spring Boot's default), until
 * it has connected every limiter call fails at once, so that the failure modes
 * apply and no request thread waits for a connect; afterwards Lettuce
 * reconnects by itself. Other clients (Jedis) are used as they are: the
 * scripts are loaded at start-up when Redis answers, but each call may open a
 * connection from the client's pool, with the client's own timeouts.
 * <p>
 * <strong>Functions.</strong> With Lettuce the connector also loads the
 * scripts as one function library ({@code FUNCTION LOAD}, on every master of
 * a cluster; see {@link LuaScripts}) and the limiter then calls them with
 * {@code FCALL}, which costs the server less per decision than
 * {@code EVALSHA}: the library's shared code runs once, at load, not on every
 * call. Where Redis refuses functions (before 7, or forbidden by an ACL or a
 * managed service) it says so once, at INFO, and the scripts go as
 * {@code EVALSHA}. A server that has lost the library (a restart without
 * persistence, {@code FUNCTION FLUSH}, a new cluster master) answers the next
 * call with an error before running anything; that call goes as
 * {@code EVALSHA} and the connector loads the library again in the background.
 * <p>
 * <strong>Failovers.</strong> With Lettuce the connection follows the primary
 * (see {@link RedisFailovers}): to a Sentinel's new master as soon as a
 * sentinel announces it ({@link SentinelWatch}), off a server that answers
 * {@code READONLY}, and, on a Cluster, to the nodes that take a lost node's
 * slots ({@link ClusterParts}); a Cluster's nodes are parts that fail alone
 * ({@link #parts()}). Writes of the kinds of limit given a durability wait for
 * the replicas of their primary ({@link ReplicaAcks}).
 */
public final class RedisLimiterConnection implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(RedisLimiterConnection.class);

	private final RedisConnectionFactory application;

	private final RedisConnectionFactory limiter;

	private final LimiterConnector connector;

	private final RedisSilence silence;

	/** Whether the INFO line saying that Redis refused functions was written. */
	private final AtomicBoolean refusalLogged = new AtomicBoolean();

	/** The default of {@code rate-limit.redis.busy-timeout}. */
	public static final Duration DEFAULT_BUSY_TIMEOUT = Duration.ofSeconds(2);

	private final Durability durability;

	private final StoreParts parts;

	private final @Nullable RedisFailovers failovers;

	private final @Nullable ClusterParts clusterParts;

	private final @Nullable ReplicaAcks acks;

	private final @Nullable SentinelWatch sentinels;

	private volatile @Nullable Disposable topologyEvents;

	private final AtomicBoolean followersClosed = new AtomicBoolean();

	/**
	 * Which kinds of limit wait for the replicas of their primary to hold each
	 * write (see {@link ReplicaAcks}), how many replicas, and for how long.
	 * @param kinds the kinds whose writes wait
	 * @param replicas how many replicas must acknowledge
	 * @param timeout the longest a write waits
	 */
	public record Durability(Set<LimitKind> kinds, int replicas, Duration timeout) {

		/** No kind waits: the primary's answer counts. */
		public static final Durability NONE = new Durability(EnumSet.noneOf(LimitKind.class), 1, Duration.ZERO);

		/**
		 * Creates a durability.
		 * @param kinds the kinds whose writes wait
		 * @param replicas how many replicas must acknowledge
		 * @param timeout the longest a write waits
		 */
		public Durability {
			kinds = kinds.isEmpty() ? EnumSet.noneOf(LimitKind.class) : EnumSet.copyOf(kinds);
		}

	}

	/**
	 * Creates the limiter's connection to the same Redis as {@code application},
	 * with functions and the default busy timeout; nothing is connected until
	 * {@link #connect()}.
	 * @param application the application's connection factory
	 * @param timeout how long Redis may send nothing while limiter calls wait
	 * @param connectTimeout the timeout of opening a connection, and how long
	 * {@link #connect()} waits
	 */
	public RedisLimiterConnection(RedisConnectionFactory application, Duration timeout, Duration connectTimeout) {
		this(application, timeout, connectTimeout, true);
	}

	/**
	 * Creates the limiter's connection to the same Redis as {@code application},
	 * with the default busy timeout; nothing is connected until {@link #connect()}.
	 * @param application the application's connection factory
	 * @param timeout how long Redis may send nothing while limiter calls wait
	 * @param connectTimeout the timeout of opening a connection, and how long
	 * {@link #connect()} waits
	 * @param functions whether to load the limiter's scripts as a function
	 * library and call them with {@code FCALL} where Redis allows it (Lettuce
	 * only); {@code false} always sends {@code EVALSHA}
	 */
	public RedisLimiterConnection(RedisConnectionFactory application, Duration timeout, Duration connectTimeout,
			boolean functions) {
		this(application, timeout, DEFAULT_BUSY_TIMEOUT, connectTimeout, functions);
	}

	/**
	 * Creates the limiter's connection to the same Redis as {@code application};
	 * nothing is connected until {@link #connect()}.
	 * @param application the application's connection factory
	 * @param timeout how long Redis may send nothing while limiter calls wait
	 * before it counts as silent (see {@link RedisSilence})
	 * @param busyTimeout the longest a limiter call waits in all, while Redis
	 * answers but not this call
	 * @param connectTimeout the timeout of opening a connection, and how long
	 * {@link #connect()} waits
	 * @param functions whether to load the limiter's scripts as a function
	 * library and call them with {@code FCALL} where Redis allows it (Lettuce
	 * only); {@code false} always sends {@code EVALSHA}
	 */
	public RedisLimiterConnection(RedisConnectionFactory application, Duration timeout, Duration busyTimeout,
			Duration connectTimeout, boolean functions) {
		this(application, timeout, busyTimeout, connectTimeout, functions, Durability.NONE,
				LimiterConnectionFactories.DEFAULT_REFRESH_PERIOD);
	}

	/**
	 * Creates the limiter's connection to the same Redis as {@code application};
	 * nothing is connected until {@link #connect()}.
	 * @param application the application's connection factory
	 * @param timeout how long Redis may send nothing while limiter calls wait
	 * before it counts as silent (see {@link RedisSilence})
	 * @param busyTimeout the longest a limiter call waits in all, while Redis
	 * answers but not this call
	 * @param connectTimeout the timeout of opening a connection, and how long
	 * {@link #connect()} waits
	 * @param functions whether to load the limiter's scripts as a function
	 * library and call them with {@code FCALL} where Redis allows it (Lettuce
	 * only); {@code false} always sends {@code EVALSHA}
	 * @param durability which kinds of limit wait for replicas, how many and how long (Lettuce only)
	 * @param topologyRefreshPeriod how often a Cluster's topology is read when
	 * nothing triggered a refresh
	 */
	public RedisLimiterConnection(RedisConnectionFactory application, Duration timeout, Duration busyTimeout,
			Duration connectTimeout, boolean functions, Durability durability, Duration topologyRefreshPeriod) {
		this.application = application;
		this.silence = new RedisSilence(timeout);
		LimiterChannels channels = new LimiterChannels();
		this.limiter = LimiterConnectionFactories.forLimiter(application, busyTimeout, connectTimeout, this.silence,
				channels, topologyRefreshPeriod);
		String address = RedisAddresses.describe(application);
		if (this.limiter instanceof LimiterLettuceConnectionFactory own) {
			this.durability = durability;
			this.failovers = new RedisFailovers(channels, address);
			this.clusterParts = own.isClusterAware() ? new ClusterParts(own) : null;
			this.parts = (this.clusterParts != null) ? this.clusterParts : StoreParts.ONE;
			if (this.clusterParts != null) {
				ClusterParts nodes = this.clusterParts;
				this.failovers.cluster(nodes);
				this.failovers.onLost(nodes::refreshSoon);
				this.silence.cluster(nodes, nodes::partOfChannel, (part) -> probeNode(own, nodes, part));
			}
			this.acks = durability.kinds().isEmpty() ? null : new ReplicaAcks(durability.replicas(), durability.timeout());
			this.sentinels = own.isRedisSentinelAware()
					? new SentinelWatch(own.getSentinelConfiguration(), own.getClientConfiguration(),
							((LettuceConnectionFactory) application).getClientConfiguration().getClientResources().orElse(null),
							connectTimeout, this.failovers)
					: null;
			if (this.sentinels != null) {
				this.failovers.sentinels(this.sentinels.addresses());
			}
			Consumer<RedisConnection> prepare = (connection) -> {
				if (functions) {
					loadFunctions(own, connection, connectTimeout, address);
				}
				if (this.acks != null) {
					this.acks.open(own, this.parts, this.sentinels != null, connection, address);
				}
			};
			this.connector = new LimiterConnector(own::connect, prepare, own::opened, address, connectTimeout);
			own.onFunctionsLost(this.connector::prepareAgain);
			own.onDestroy(this::closeFollowers);
		}
		else {
			if (!durability.kinds().isEmpty()) {
				logger.warn("The rate limiter waits for Redis replicas (rate-limit.redis.durability) with Lettuce only; "
						+ "with " + application.getClass().getSimpleName() + " its writes are acknowledged by the "
						+ "primary alone and a failover may lose them");
			}
			this.durability = Durability.NONE;
			this.failovers = null;
			this.clusterParts = null;
			this.parts = StoreParts.ONE;
			this.acks = null;
			this.sentinels = null;
			this.connector = new LimiterConnector(this.limiter::getConnection, (connection) -> {
			}, () -> {
			}, address, connectTimeout);
		}
		this.silence.onSilence(() -> this.connector.probe(this.silence, this::ping));
	}

	/**
	 * Probes a silent Cluster node with a PING on its own connection, once per
	 * silence timeout, until it answers (its reply opens its gate, see
	 * {@link SilenceWatch}) or keeps no keys any more; asks for a fresh
	 * topology meanwhile, so that a replica that takes its slots is found.
	 */
	private void probeNode(LimiterLettuceConnectionFactory own, ClusterParts nodes, String part) {
		if (this.followersClosed.get() || !this.silence.isPartSilent(part)) {
			return;
		}
		if (!nodes.keepsKeys(part)) {
			this.silence.partReplaced(part);
			return;
		}
		nodes.refreshSoon();
		int colon = part.lastIndexOf(':');
		try {
			own.sharedClusterConnection()
				.getConnectionAsync(part.substring(0, colon), Integer.parseInt(part.substring(colon + 1)))
				// Its reply, if any, opens the node's gate on the thread that reads it; else the next round probes again.
				.thenCompose((node) -> node.async().ping());
		}
		catch (RuntimeException ex) {
			// Not a node address, or not connected: the next round tries again.
		}
		own.eventExecutors()
			.schedule(() -> probeNode(own, nodes, part), this.silence.timeout().toMillis(), TimeUnit.MILLISECONDS);
	}

	/** Stops what follows the connection, before the factory closes its channels; once. */
	private void closeFollowers() {
		if (!this.followersClosed.compareAndSet(false, true)) {
			return;
		}
		if (this.failovers != null) {
			this.failovers.close();
		}
		if (this.sentinels != null) {
			this.sentinels.close();
		}
		Disposable events = this.topologyEvents;
		if (events != null) {
			events.dispose();
		}
		if (this.acks != null) {
			this.acks.close();
		}
		this.connector.close();
	}

	/** One probe: a PING through the limiter's factory, held to its timeouts like any call. */
	private void ping() {
		try (RedisConnection connection = this.limiter.getConnection()) {
			connection.ping();
		}
		this.silence.heard();
	}

	/**
	 * Returns whether Redis answers the limiter now: the gate every limiter call
	 * passes.
	 * @return the gate
	 */
	public RedisSilence silence() {
		return this.silence;
	}

	/**
	 * Loads the function library, or says once why the scripts go as
	 * {@code EVALSHA} instead: Redis refused (before 7, or functions forbidden).
	 */
	private void loadFunctions(LimiterLettuceConnectionFactory own, RedisConnection connection, Duration timeout,
			String address) {
		String refusal = LettuceFunctions.load(connection, timeout);
		own.functionsLoaded(refusal == null);
		if (refusal == null) {
			if (logger.isDebugEnabled()) {
				logger.debug("Rate limiter loaded its function library " + LuaScripts.libraryName()
						+ " into Redis at " + address);
			}
		}
		else if (this.refusalLogged.compareAndSet(false, true)) {
			// Once: an attempt that fails after this point (at PING) is made again, and refused again.
			logger.info("Redis at " + address + " refused the rate limiter's function library (" + refusal
					+ "); the limiter sends its scripts as EVALSHA instead");
		}
	}

	/**
	 * Connects and loads the limiter's scripts, waiting at most the connect
	 * timeout; when that does not succeed, logs one warning and keeps trying on
	 * a daemon thread of its own. Never throws for an unreachable Redis. With
	 * Sentinel it starts listening to the sentinels first; on a Cluster, to
	 * topology changes.
	 * @throws dev.ratelimit.core.RateLimitConfigurationException when Redis
	 * answered and refused the scripts: no limit can be decided on it
	 */
	public void connect() {
		if (this.sentinels != null) {
			// Listening first: a switch during start-up is heard too.
			this.sentinels.start();
		}
		if (this.clusterParts != null && this.limiter instanceof LimiterLettuceConnectionFactory own
				&& this.failovers != null) {
			RedisFailovers follow = this.failovers;
			this.topologyEvents = own.eventBus()
				.get()
				.filter(ClusterTopologyChangedEvent.class::isInstance)
				.subscribe((event) -> follow.topologyChanged());
		}
		this.connector.connectAtStartup();
	}

	/**
	 * Returns the factory limiter calls use.
	 * @return the connection factory
	 */
	public RedisConnectionFactory connectionFactory() {
		return this.limiter;
	}

	/**
	 * Returns whether the limiter has connected since start-up. Once it has, it
	 * stays true: an outage afterwards shows in the calls, not here.
	 * @return whether it connected
	 */
	public boolean isConnected() {
		return this.connector.isConnected();
	}

	/**
	 * Returns whether the limiter's scripts are called as the functions of its
	 * library ({@code FCALL}) right now, rather than sent as {@code EVALSHA}:
	 * false before connecting, where Redis refused functions, with functions
	 * turned off or another client than Lettuce, and while a server that lost
	 * the library has not been given it again.
	 * @return whether scripts are function calls
	 */
	public boolean usesFunctions() {
		return this.limiter instanceof LimiterLettuceConnectionFactory own && own.functionsLoaded();
	}

	/**
	 * Returns why the last connect attempt failed, while not connected.
	 * @return the failure, or {@code null}
	 */
	public @Nullable String lastConnectFailure() {
		RuntimeException failure = this.connector.lastFailure();
		return (failure != null) ? LimiterConnector.message(failure) : null;
	}

	/**
	 * Returns where the connection goes: {@code host:port}, a socket, a Sentinel
	 * master or a cluster's seed nodes.
	 * @return the address
	 */
	public String address() {
		return this.connector.address();
	}

	/**
	 * Returns where the limiter's Redis keeps each key: the masters of a
	 * Cluster, each failing alone, or one part.
	 * @return the parts
	 */
	public StoreParts parts() {
		return this.parts;
	}

	/**
	 * Returns whether writes of a kind of limit wait for replicas.
	 * @param kind the kind
	 * @return whether they are durable
	 */
	public boolean durable(LimitKind kind) {
		return this.acks != null && this.durability.kinds().contains(kind);
	}

	/**
	 * Returns how many times the limiter's connection followed a failover, by
	 * cause ({@code switch-master}, {@code readonly}, {@code connection-lost}).
	 * @return the counts since start-up
	 */
	public Map<String, Long> failovers() {
		Map<String, Long> counts = new LinkedHashMap<>();
		for (RedisFailovers.Cause cause : RedisFailovers.Cause.values()) {
			counts.put(cause.tag(), (this.failovers != null) ? this.failovers.count(cause) : 0L);
		}
		return counts;
	}

	/**
	 * Returns the last failover the limiter's connection followed.
	 * @return what happened and when, or {@code null} when there was none
	 */
	public @Nullable String lastFailover() {
		RedisFailovers.Last last = (this.failovers != null) ? this.failovers.last() : null;
		return (last != null) ? last.at() + ": " + last.description() : null;
	}

	/**
	 * Returns whether a failover is under way: the limiter's connection has not
	 * reached a server that answers since it began.
	 * @return whether one is
	 */
	public boolean failingOver() {
		return this.failovers != null && this.failovers.underWay();
	}

	/**
	 * Returns the primaries whose replicas do not acknowledge the limiter's
	 * durable writes now, with why.
	 * @return the primaries by name, empty when every one answers
	 */
	public Map<String, String> laggingReplicas() {
		return (this.acks != null) ? this.acks.lagging() : Map.of();
	}

	@Nullable ReplicaAcks acks() {
		return this.acks;
	}

	@Nullable RedisFailovers failoversFollower() {
		return this.failovers;
	}

	@Nullable ClusterParts clusterParts() {
		return this.clusterParts;
	}

	@Override
	public void close() {
		closeFollowers();
		if (this.limiter != this.application && this.limiter instanceof LettuceConnectionFactory own) {
			own.destroy();
		}
	}

}
