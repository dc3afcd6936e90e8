package dev.ratelimit.redis;

import java.time.Duration;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.IntConsumer;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

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
 * <p>
 * <strong>Coalescing.</strong> With Lettuce, decisions that wait for the same
 * state in Redis at the same moment can go as one call, applied in order on
 * the server (see {@link DecisionCoalescer}); off unless asked for.
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

	/** What keeps the connection on the servers that answer, with Lettuce; {@code null} with another client. */
	private final @Nullable FailoverFollowers followers;

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
	 * Whether the decisions waiting for the same Redis at the same moment go as
	 * one call (see {@link DecisionCoalescer}; Lettuce only), and the most
	 * decisions one call carries.
	 * @param enabled whether decisions coalesce
	 * @param maxBatch the most decisions one call carries, at least 1
	 */
	public record Coalescing(boolean enabled, int maxBatch) {

		/** Decisions coalesce, at most {@value DecisionCoalescer#DEFAULT_MAX_BATCH} to a call. */
		public static final Coalescing ON = new Coalescing(true, DecisionCoalescer.DEFAULT_MAX_BATCH);

		/** Every decision is a call of its own: the default. */
		public static final Coalescing OFF = new Coalescing(false, DecisionCoalescer.DEFAULT_MAX_BATCH);

		/**
		 * Creates the setting.
		 * @param enabled whether decisions coalesce
		 * @param maxBatch the most decisions one call carries, at least 1
		 */
		public Coalescing {
			if (maxBatch < 1) {
				throw new IllegalArgumentException("A coalesced call carries at least one decision: " + maxBatch);
			}
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
		this(application, timeout, busyTimeout, connectTimeout, functions, durability, topologyRefreshPeriod,
				Coalescing.OFF);
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
	 * @param coalescing whether decisions waiting at the same moment go as one call (Lettuce only)
	 */
	public RedisLimiterConnection(RedisConnectionFactory application, Duration timeout, Duration busyTimeout,
			Duration connectTimeout, boolean functions, Durability durability, Duration topologyRefreshPeriod,
			Coalescing coalescing) {
		this.application = application;
		String address = RedisAddresses.describe(application);
		this.silence = new RedisSilence(timeout, address);
		LimiterChannels channels = new LimiterChannels();
		this.limiter = LimiterConnectionFactories.forLimiter(application, busyTimeout, connectTimeout, this.silence,
				channels, topologyRefreshPeriod);
		if (this.limiter instanceof LimiterLettuceConnectionFactory own) {
			FailoverFollowers follow = new FailoverFollowers(own, channels, this.silence, durability,
					((LettuceConnectionFactory) application).getClientConfiguration().getClientResources().orElse(null),
					connectTimeout, address);
			this.followers = follow;
			Consumer<RedisConnection> prepare = (connection) -> {
				if (functions) {
					loadFunctions(own, connection, connectTimeout, address);
				}
				follow.prepare(connection, address);
			};
			this.connector = new LimiterConnector(own::connect, prepare, own::opened, address, connectTimeout);
			own.onFunctionsLost(this.connector::prepareAgain);
			if (coalescing.enabled()) {
				own.coalescer(new DecisionCoalescer(own, this.silence, coalescing.maxBatch()));
			}
			own.onDestroy(this::closeFollowers);
		}
		else {
			if (!durability.kinds().isEmpty()) {
				logger.warn("The rate limiter waits for Redis replicas (rate-limit.redis.durability) with Lettuce only; "
						+ "with " + application.getClass().getSimpleName() + " its writes are acknowledged by the "
						+ "primary alone and a failover may lose them");
			}
			this.followers = null;
			this.connector = new LimiterConnector(this.limiter::getConnection, (connection) -> {
			}, () -> {
			}, address, connectTimeout);
		}
		this.silence.onSilence(() -> this.connector.probe(this.silence, this::ping));
	}

	/** Stops what follows the connection, and the connector, before the factory closes its channels. */
	private void closeFollowers() {
		if (this.followers != null) {
			this.followers.close();
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
		if (this.followers != null) {
			this.followers.start();
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
		return (this.followers != null) ? this.followers.parts() : StoreParts.ONE;
	}

	/**
	 * Returns whether writes of a kind of limit wait for replicas.
	 * @param kind the kind
	 * @return whether they are durable
	 */
	public boolean durable(LimitKind kind) {
		return this.followers != null && this.followers.durable(kind);
	}

	/**
	 * Returns how many times the limiter's connection followed a failover, by
	 * cause ({@code switch-master}, {@code readonly}, {@code connection-lost}).
	 * @return the counts since start-up
	 */
	public Map<String, Long> failovers() {
		if (this.followers != null) {
			return this.followers.counts();
		}
		Map<String, Long> none = new LinkedHashMap<>();
		for (RedisFailovers.Cause cause : RedisFailovers.Cause.values()) {
			none.put(cause.tag(), 0L);
		}
		return none;
	}

	/**
	 * Returns the last failover the limiter's connection followed.
	 * @return what happened and when, or {@code null} when there was none
	 */
	public @Nullable String lastFailover() {
		RedisFailovers.Last last = (this.followers != null) ? this.followers.failovers().last() : null;
		return (last != null) ? last.at() + ": " + last.description() : null;
	}

	/**
	 * Returns whether a failover is under way: the limiter's connection has not
	 * reached a server that answers since it began.
	 * @return whether one is
	 */
	public boolean failingOver() {
		return this.followers != null && this.followers.failovers().underWay();
	}

	/**
	 * Returns the primaries whose replicas do not acknowledge the limiter's
	 * durable writes now, with why.
	 * @return the primaries by name, empty when every one answers
	 */
	public Map<String, String> laggingReplicas() {
		return (this.followers != null) ? this.followers.laggingReplicas() : Map.of();
	}

	/**
	 * Returns whether decisions waiting for the same Redis at the same moment
	 * go as one call: coalescing was asked for, on the limiter's own Lettuce
	 * connection.
	 * @return whether decisions coalesce
	 */
	public boolean coalesces() {
		return this.limiter instanceof LimiterLettuceConnectionFactory own && own.coalescer() != null;
	}

	/**
	 * Tells a listener how many decisions each call carries, while decisions
	 * coalesce: one for a decision that went alone.
	 * @param sizes the listener, called on the thread that sends the call; it must not block
	 */
	public void onBatch(IntConsumer sizes) {
		if (this.limiter instanceof LimiterLettuceConnectionFactory own) {
			DecisionCoalescer coalescer = own.coalescer();
			if (coalescer != null) {
				coalescer.onBatch(sizes);
			}
		}
	}

	@Nullable ReplicaAcks acks() {
		return (this.followers != null) ? this.followers.acks() : null;
	}

	/**
	 * Returns a failure of a call on this connection as it is to be told: one
	 * met while Redis is silent or while a failover or lost connection is
	 * followed is that outage, which was warned of once (see
	 * {@link AnnouncedRedisFailure#told}).
	 * @param failure the call's failure
	 * @return the failure to throw
	 */
	RuntimeException told(RuntimeException failure) {
		return AnnouncedRedisFailure.told(failure, failoversFollower(), this.silence,
				RedisFailovers.UNKNOWN_GENERATION);
	}

	@Nullable RedisFailovers failoversFollower() {
		return (this.followers != null) ? this.followers.failovers() : null;
	}

	@Nullable ClusterParts clusterParts() {
		return (this.followers != null) ? this.followers.clusterParts() : null;
	}

	@Override
	public void close() {
		closeFollowers();
		if (this.limiter != this.application && this.limiter instanceof LettuceConnectionFactory own) {
			own.destroy();
		}
	}

}
