package dev.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;

import java.net.SocketAddress;

import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.models.partitions.Partitions;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.StoreParts;
import dev.ratelimit.redis.LimiterChannels.HostAndPort;

/**
 * The parts of a Redis Cluster as the limiter's connection sees them: each
 * master, named by its address, keeps the keys of its slots. A master that
 * fails affects its own keys only (see {@link dev.ratelimit.core.StoreHealth});
 * once its replica has taken its slots, the failed master keeps no keys and its
 * failure no longer counts.
 * <p>
 * A call that fails on a node asks for a refresh of the topology
 * ({@link #refreshSoon}), at most every {@link #REFRESH_PAUSE_NANOS} while
 * calls keep failing: a killed master's replica is promoted by the cluster in
 * a second or two, and its slots are decided on it again one refresh later,
 * rather than when Lettuce's own triggers next fire. Never blocks: the lookup
 * reads Lettuce's slot table, the refresh runs on Lettuce's threads.
 */
final class ClusterParts implements StoreParts {

	private static final Log logger = LogFactory.getLog(ClusterParts.class);

	/** The least time between two refreshes asked for by failed calls. */
	private static final long REFRESH_PAUSE_NANOS = 250_000_000L;

	private final LimiterLettuceConnectionFactory factory;

	private final AtomicLong lastRefreshNanos = new AtomicLong(System.nanoTime() - REFRESH_PAUSE_NANOS);

	ClusterParts(LimiterLettuceConnectionFactory factory) {
		this.factory = factory;
	}

	@Override
	public String partOf(String key) {
		Partitions partitions = partitions();
		if (partitions == null) {
			return "";
		}
		int slot = SlotHash.getSlot(key.getBytes(StandardCharsets.UTF_8));
		RedisClusterNode master = partitions.getMasterBySlot(slot);
		return (master != null) ? name(master) : "slot " + slot + " (no master)";
	}

	@Override
	public boolean keepsKeys(String part) {
		Partitions partitions = partitions();
		if (partitions == null) {
			return true;
		}
		for (RedisClusterNode node : partitions) {
			if (node.is(RedisClusterNode.NodeFlag.UPSTREAM) && !node.getSlots().isEmpty() && name(node).equals(part)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Names the node at a channel's remote end as {@link #partOf} names it.
	 * @param remote the channel's remote address
	 * @return the node's name
	 */
	String partOfChannel(SocketAddress remote) {
		Partitions partitions = partitions();
		if (partitions != null) {
			for (RedisClusterNode node : partitions) {
				RedisURI uri = node.getUri();
				if (uri != null && new HostAndPort(uri.getHost(), uri.getPort()).matches(remote)) {
					return name(node);
				}
			}
		}
		HostAndPort address = HostAndPort.of(remote);
		return (address != null) ? address.toString() : String.valueOf(remote);
	}

	/**
	 * Asks Lettuce to read the topology again, unless a refresh was asked for
	 * less than {@link #REFRESH_PAUSE_NANOS} ago.
	 */
	void refreshSoon() {
		long now = System.nanoTime();
		long last = this.lastRefreshNanos.get();
		if (now - last < REFRESH_PAUSE_NANOS || !this.lastRefreshNanos.compareAndSet(last, now)) {
			return;
		}
		RedisClusterClient client = this.factory.clusterClient();
		if (client == null || !this.factory.isConnected()) {
			return;
		}
		client.refreshPartitionsAsync().whenComplete((ignored, failure) -> {
			if (failure != null && logger.isDebugEnabled()) {
				logger.debug("Rate limiter could not read the Redis Cluster topology: " + failure);
			}
		});
	}

	/** The slot table, once the connector has connected (before, reading it would connect). */
	private @Nullable Partitions partitions() {
		RedisClusterClient client = this.factory.clusterClient();
		return (client != null && this.factory.isConnected()) ? client.getPartitions() : null;
	}

	private static String name(RedisClusterNode node) {
		RedisURI uri = node.getUri();
		return (uri != null) ? uri.getHost() + ":" + uri.getPort() : node.getNodeId();
	}

}
