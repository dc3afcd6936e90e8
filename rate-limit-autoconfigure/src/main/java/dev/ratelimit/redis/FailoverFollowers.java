package dev.ratelimit.redis;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.lettuce.core.cluster.event.ClusterTopologyChangedEvent;
import io.lettuce.core.resource.ClientResources;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;

import org.springframework.data.redis.connection.RedisConnection;

import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.StoreParts;
import dev.ratelimit.redis.RedisLimiterConnection.Durability;

/**
 * What keeps the limiter's own Lettuce connection on the servers that answer
 * through failovers, and its writes where a failover cannot lose them: the
 * follower of the connection's channels ({@link RedisFailovers}), the
 * sentinels' announcements ({@link SentinelWatch}), a Cluster's masters as
 * parts that fail and fall silent alone ({@link ClusterParts}, with a probe per
 * silent node), and the acknowledgements of the replicas ({@link ReplicaAcks})
 * for the kinds of limit whose writes are durable. One per
 * {@link RedisLimiterConnection} with Lettuce; closed before its factory.
 */
final class FailoverFollowers implements AutoCloseable {

	private final LimiterLettuceConnectionFactory factory;

	private final RedisSilence silence;

	private final Durability durability;

	private final RedisFailovers failovers;

	private final @Nullable ClusterParts clusterParts;

	private final @Nullable ReplicaAcks acks;

	private final @Nullable SentinelWatch sentinels;

	private volatile @Nullable Disposable topologyEvents;

	private final AtomicBoolean closed = new AtomicBoolean();

	/**
	 * Creates the followers of a connection; nothing listens before {@link #start()}.
	 * @param factory the limiter's factory
	 * @param channels its channels
	 * @param silence its gate
	 * @param durability which kinds' writes wait for replicas
	 * @param application the application's client resources, or {@code null}
	 * @param connectTimeout the timeout of opening a connection
	 * @param address the server as logs name it
	 */
	FailoverFollowers(LimiterLettuceConnectionFactory factory, LimiterChannels channels, RedisSilence silence,
			Durability durability, @Nullable ClientResources application, Duration connectTimeout, String address) {
		this.factory = factory;
		this.silence = silence;
		this.durability = durability;
		this.failovers = new RedisFailovers(channels, address);
		this.clusterParts = factory.isClusterAware() ? new ClusterParts(factory) : null;
		if (this.clusterParts != null) {
			ClusterParts nodes = this.clusterParts;
			this.failovers.cluster(nodes);
			this.failovers.onLost(nodes::refreshSoon);
			silence.cluster(nodes, nodes::partOfChannel, (part) -> probeNode(nodes, part));
		}
		this.acks = durability.kinds().isEmpty() ? null : new ReplicaAcks(durability.replicas(), durability.timeout());
		this.sentinels = factory.isRedisSentinelAware() ? new SentinelWatch(
				Objects.requireNonNull(factory.getSentinelConfiguration(), "sentinel-aware: has sentinels"),
				factory.getClientConfiguration(), application, connectTimeout, this.failovers) : null;
		if (this.sentinels != null) {
			this.failovers.sentinels(this.sentinels.addresses());
		}
	}

	/**
	 * Starts listening: to the sentinels, before the first connect, so that a
	 * switch during start-up is heard too; on a Cluster, to topology changes.
	 */
	void start() {
		if (this.sentinels != null) {
			this.sentinels.start();
		}
		if (this.clusterParts != null) {
			RedisFailovers follow = this.failovers;
			this.topologyEvents = this.factory.eventBus()
				.get()
				.filter(ClusterTopologyChangedEvent.class::isInstance)
				.subscribe((event) -> follow.topologyChanged());
		}
	}

	/**
	 * Prepares a new connection of the connector's: learns the replicas, and
	 * opens the connection their acknowledgements are asked on.
	 * @param connection the connection
	 * @param address the server as logs name it
	 */
	void prepare(RedisConnection connection, String address) {
		if (this.acks != null) {
			this.acks.open(this.factory, parts(), this.sentinels != null, connection, address);
		}
	}

	/**
	 * Probes a silent Cluster node with a PING on its own connection, once per
	 * silence timeout, until it answers (its reply opens its gate, see
	 * {@link SilenceWatch}) or keeps no keys any more; asks for a fresh
	 * topology meanwhile, so that a replica that takes its slots is found.
	 */
	private void probeNode(ClusterParts nodes, String part) {
		if (this.closed.get() || !this.silence.isPartSilent(part)) {
			return;
		}
		if (!nodes.keepsKeys(part)) {
			this.silence.partReplaced(part);
			return;
		}
		nodes.refreshSoon();
		int colon = part.lastIndexOf(':');
		try {
			this.factory.sharedClusterConnection()
				.getConnectionAsync(part.substring(0, colon), Integer.parseInt(part.substring(colon + 1)))
				// Its reply, if any, opens the node's gate on the thread that reads it; else the next round probes again.
				.thenCompose((node) -> node.async().ping());
		}
		catch (RuntimeException ex) {
			// Not a node address, or not connected: the next round tries again.
		}
		this.factory.eventExecutors()
			.schedule(() -> probeNode(nodes, part), this.silence.timeout().toMillis(), TimeUnit.MILLISECONDS);
	}

	/** @return where each key lives: a Cluster's masters, else one part */
	StoreParts parts() {
		return (this.clusterParts != null) ? this.clusterParts : StoreParts.ONE;
	}

	/** @return the follower of the connection's channels */
	RedisFailovers failovers() {
		return this.failovers;
	}

	/** @return a Cluster's masters, or {@code null} for one server */
	@Nullable ClusterParts clusterParts() {
		return this.clusterParts;
	}

	/** @return the acknowledgements of the replicas, or {@code null} when no kind waits for them */
	@Nullable ReplicaAcks acks() {
		return this.acks;
	}

	/**
	 * Returns whether writes of a kind of limit wait for replicas.
	 * @param kind the kind
	 * @return whether they are durable
	 */
	boolean durable(LimitKind kind) {
		return this.acks != null && this.durability.kinds().contains(kind);
	}

	/** @return how many times the connection followed a failover, by cause */
	Map<String, Long> counts() {
		Map<String, Long> counts = new LinkedHashMap<>();
		for (RedisFailovers.Cause cause : RedisFailovers.Cause.values()) {
			counts.put(cause.tag(), this.failovers.count(cause));
		}
		return counts;
	}

	/** @return the primaries whose replicas do not acknowledge now, with why */
	Map<String, String> laggingReplicas() {
		return (this.acks != null) ? this.acks.lagging() : Map.of();
	}

	/** Stops every follower, before the factory closes its channels; once. */
	@Override
	public void close() {
		if (!this.closed.compareAndSet(false, true)) {
			return;
		}
		this.failovers.close();
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
	}

}
