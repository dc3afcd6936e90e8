package dev.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.Partitions;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.netty.util.concurrent.EventExecutorGroup;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.data.redis.connection.RedisConnection;

import dev.ratelimit.core.InFlightBatches;
import dev.ratelimit.core.StoreParts;

/**
 * Makes the limiter's writes durable where a failover could lose them: a write
 * counts only once the replicas of its primary hold it. Redis replicates
 * asynchronously, so a primary that fails over (a planned {@code SENTINEL
 * FAILOVER}, a killed primary) loses what it had not yet sent its replica, and
 * an instance still writing to a primary that Sentinel has already replaced
 * loses everything it writes there until it moves. {@code WAIT n timeout}
 * returns once {@code n} replicas hold the caller's writes; a primary that no
 * longer has its replica (replaced, or cut off) answers fewer, so nothing is
 * counted there.
 * <p>
 * <strong>One {@code WAIT} for many writes.</strong> {@code WAIT} holds the
 * connection it is sent on until the replicas answer, so it goes on a
 * connection of its own, and counts only that connection's own writes: each
 * {@code WAIT} follows a write of its own (a {@code SET} of a marker key beside
 * the write it confirms, expiring after a second), which the primary replicates
 * after every write it applied before, the limiter's decisions included. A
 * write whose reply has arrived is confirmed by the next {@code WAIT} sent
 * after it; one {@code WAIT} per node is in flight at a time, and confirms
 * every write that arrived while the one before was out. So a decision costs
 * one round trip more, and Redis one {@code SET} and one {@code WAIT} per
 * batch, not per decision.
 * <p>
 * <strong>Where.</strong> A write waits where its primary has had replicas: a
 * Sentinel master, a standalone server that reported a connected replica when
 * the limiter connected, a Cluster shard (its slots) whose master has had one
 * since. Where there never was a replica there is no failover to lose a write
 * to, and the primary's answer suffices. A shard or master whose replica is
 * gone afterwards (killed, or not back yet after a failover) still waits, and
 * its writes are not confirmed: they follow the failure mode, which for a
 * budget is closed by default.
 * <p>
 * <strong>When the replicas do not answer.</strong> A batch that too few
 * replicas acknowledge within the timeout fails with
 * {@link UnconfirmedWriteException}. The node then counts as lagging: later
 * writes there are refused before they are sent ({@link #refusal}), and a probe
 * (one more marker and {@code WAIT}) runs every {@link #PROBE_PAUSE} until the
 * replicas answer, with one warning when it starts and one line when it ends.
 */
final class ReplicaAcks implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(ReplicaAcks.class);

	/** How often a lagging node is probed. */
	static final Duration PROBE_PAUSE = Duration.ofMillis(250);

	/** How long a marker key lives: one WAIT's worth, with room. */
	private static final long MARKER_MILLIS = 1000;

	private static final byte[] MARKER_VALUE = new byte[0];

	/** The confirmation of a write whose primary never had replicas: at once. */
	private static final CompletionStage<Void> CONFIRMED = CompletableFuture.completedStage(null);

	/** How often, at most, the slots of masters with replicas are read from the cluster's slot table. */
	private static final long SLOTS_REFRESH_NANOS = 1_000_000_000L;

	private final int replicas;

	private final Duration timeout;

	private final Map<String, Node> nodes = new ConcurrentHashMap<>();

	/** The slots whose master has had a replica: sticky, a replica lost later still counts. */
	private final BitSet replicatedSlots = new BitSet(SlotHash.SLOT_COUNT);

	private volatile long slotsReadNanos;

	private volatile @Nullable LimiterLettuceConnectionFactory factory;

	/** Where each key lives: a cluster's masters, else one primary. */
	private volatile StoreParts parts = StoreParts.ONE;

	private volatile @Nullable StatefulConnection<byte[], byte[]> connection;

	/** Standalone and Sentinel: whether the primary has had replicas. */
	private volatile boolean primaryReplicated;

	/** Whether the INFO line saying that the primary has no replica was written. */
	private volatile boolean saidAlone;

	private volatile boolean closed;

	/**
	 * Creates the acknowledgements of the limiter's durable writes; nothing waits
	 * until {@link #open} has run.
	 * @param replicas how many replicas must hold a write
	 * @param timeout the longest a write waits for them
	 */
	ReplicaAcks(int replicas, Duration timeout) {
		this.replicas = replicas;
		this.timeout = timeout;
	}

	/**
	 * Learns whether the primary has replicas and, where writes wait for them,
	 * opens the connection the {@code WAIT}s go on. On the connector's thread,
	 * after the shared connection opened; again after each preparation of the
	 * connector.
	 * @param factory the limiter's factory
	 * @param parts where each key lives: a cluster's masters, else {@link StoreParts#ONE}
	 * @param sentinel whether the factory follows a Sentinel master, which has
	 * replicas by design
	 * @param server a connection of the limiter's to the server, to ask it
	 * @param address the server as logs name it
	 */
	void open(LimiterLettuceConnectionFactory factory, StoreParts parts, boolean sentinel, RedisConnection server,
			String address) {
		if (this.closed) {
			return;
		}
		boolean cluster = factory.isClusterAware();
		if (!cluster) {
			boolean had = this.primaryReplicated;
			this.primaryReplicated = had || sentinel || connectedReplicas(server) > 0;
			if (!this.primaryReplicated) {
				if (!had && !this.saidAlone) {
					this.saidAlone = true;
					logger.info("Redis at " + address + " has no replica: the rate limiter's durable writes are "
							+ "acknowledged by the primary alone (there is no failover to lose them to)");
				}
				this.parts = parts;
				this.factory = factory;
				return;
			}
		}
		StatefulConnection<byte[], byte[]> opened = this.connection;
		if (opened == null || !opened.isOpen()) {
			this.connection = factory.openDedicated();
		}
		this.parts = parts;
		this.factory = factory;
	}

	private static int connectedReplicas(RedisConnection server) {
		Properties info = server.serverCommands().info("replication");
		String replicas = (info != null) ? info.getProperty("connected_slaves") : null;
		return (replicas != null) ? Integer.parseInt(replicas.trim()) : 0;
	}

	/**
	 * Returns why a durable write on a key must not be sent now (its node is
	 * lagging: its replicas did not acknowledge the last writes), or
	 * {@code null} when it may.
	 * @param key the write's first key
	 * @return the refusal, or {@code null}
	 */
	@Nullable RuntimeException refusal(String key) {
		if (this.nodes.isEmpty()) {
			return null;
		}
		Node node = this.nodes.get(nodeOf(key));
		if (node == null || !node.lagging) {
			return null;
		}
		return new DataAccessResourceFailureException("The replicas of Redis " + node.describe()
				+ " have not acknowledged the limiter's writes (" + node.why
				+ "); durable writes there are refused until they do");
	}

	/**
	 * Returns a stage that completes once the replicas hold a write whose reply
	 * has arrived, at once where the write's primary never had replicas.
	 * @param key the write's first key
	 * @return the confirmation; fails with {@link UnconfirmedWriteException}
	 * when too few replicas acknowledge in time
	 */
	CompletionStage<Void> confirm(String key) {
		if (!replicated(key)) {
			return CONFIRMED;
		}
		return this.nodes.computeIfAbsent(nodeOf(key), Node::new).confirm(key);
	}

	/**
	 * Waits for {@link #confirm}, for a caller that waits anyway.
	 * @param key the write's first key
	 * @throws UnconfirmedWriteException when too few replicas acknowledge in time
	 */
	void await(String key) {
		if (!replicated(key)) {
			return;
		}
		CompletionStage<Void> confirmed = confirm(key);
		try {
			// Bounded by the WAIT's own timeout; the margin covers the round trip and a busy machine.
			confirmed.toCompletableFuture().get(this.timeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof RuntimeException cause) {
				throw cause;
			}
			throw new UnconfirmedWriteException("Could not confirm a write with the replicas", ex.getCause());
		}
		catch (TimeoutException ex) {
			throw new UnconfirmedWriteException("No acknowledgement of the replicas within " + this.timeout.toMillis()
					+ " ms and more");
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new UnconfirmedWriteException("Interrupted while waiting for the replicas", ex);
		}
	}

	/**
	 * Returns the nodes whose replicas do not acknowledge now, with why.
	 * @return the lagging nodes by name
	 */
	Map<String, String> lagging() {
		Map<String, String> lagging = new LinkedHashMap<>();
		this.nodes.forEach((name, node) -> {
			if (node.lagging) {
				lagging.put(node.describe(), node.why);
			}
		});
		return lagging;
	}

	@Override
	public void close() {
		this.closed = true;
		StatefulConnection<byte[], byte[]> opened = this.connection;
		if (opened != null) {
			opened.closeAsync();
		}
	}

	/**
	 * Whether a write on the key waits for replicas: before {@link #open} it
	 * does (and is not confirmed: nothing is known of the replicas yet).
	 */
	private boolean replicated(String key) {
		LimiterLettuceConnectionFactory own = this.factory;
		if (own == null) {
			return true;
		}
		if (!(this.connection instanceof StatefulRedisClusterConnection<?, ?>)) {
			return this.primaryReplicated;
		}
		refreshReplicatedSlots(own);
		synchronized (this.replicatedSlots) {
			return this.replicatedSlots.get(SlotHash.getSlot(key.getBytes(StandardCharsets.UTF_8)));
		}
	}

	/** Marks the slots of every master that has a replica in the cluster's slot table, at most once a second. */
	private void refreshReplicatedSlots(LimiterLettuceConnectionFactory own) {
		long now = System.nanoTime();
		if (now - this.slotsReadNanos < SLOTS_REFRESH_NANOS) {
			return;
		}
		this.slotsReadNanos = now;
		RedisClusterClient client = own.clusterClient();
		if (client == null) {
			return;
		}
		Partitions partitions = client.getPartitions();
		List<String> withReplicas = new ArrayList<>();
		for (RedisClusterNode node : partitions) {
			if (node.is(RedisClusterNode.NodeFlag.REPLICA) && node.getSlaveOf() != null) {
				withReplicas.add(node.getSlaveOf());
			}
		}
		synchronized (this.replicatedSlots) {
			for (RedisClusterNode node : partitions) {
				if (node.is(RedisClusterNode.NodeFlag.UPSTREAM) && withReplicas.contains(node.getNodeId())) {
					for (int slot : node.getSlots()) {
						this.replicatedSlots.set(slot);
					}
				}
			}
		}
	}

	/** The node a key's write went to: the slot's master on a cluster, else the one primary. */
	private String nodeOf(String key) {
		return this.parts.partOf(key);
	}

	/** The WAIT connection's commands on a node: the one server, or the cluster node named. */
	private CompletionStage<RedisAsyncCommands<byte[], byte[]>> commands(String node) {
		StatefulConnection<byte[], byte[]> opened = this.connection;
		if (opened instanceof StatefulRedisConnection<byte[], byte[]> server) {
			return CompletableFuture.completedFuture(server.async());
		}
		if (opened instanceof StatefulRedisClusterConnection<byte[], byte[]> cluster) {
			int colon = node.lastIndexOf(':');
			if (colon > 0) {
				return cluster.getConnectionAsync(node.substring(0, colon), Integer.parseInt(node.substring(colon + 1)))
					.thenApply(StatefulRedisConnection::async);
			}
		}
		return CompletableFuture.failedFuture(new UnconfirmedWriteException(
				"The limiter's connection for acknowledgements to Redis " + describe(node) + " is not open"));
	}

	private static String describe(String node) {
		return node.isEmpty() ? "primary" : "node " + node;
	}

	private @Nullable EventExecutorGroup executor() {
		LimiterLettuceConnectionFactory own = this.factory;
		return (own != null) ? own.eventExecutors() : null;
	}

	/** One primary's acknowledgements: the writes waiting, the WAIT in flight, whether it lags. */
	private final class Node {

		private final String name;

		/**
		 * One marker and WAIT in flight at a time, confirming every write whose
		 * reply arrived while the one before was in flight.
		 */
		private final InFlightBatches<String, Void> batches = new InFlightBatches<>(this::acknowledgeAll,
				Integer.MAX_VALUE);

		/** A key of the latest batch, next to which its marker is written (the same slot on a cluster). */
		private volatile String markerKey = "";

		private volatile boolean lagging;

		private volatile String why = "";

		private volatile boolean probing;

		Node(String name) {
			this.name = name;
		}

		String describe() {
			return ReplicaAcks.describe(this.name);
		}

		CompletionStage<Void> confirm(String key) {
			return this.batches.submit(key);
		}

		/** Sends one marker, beside the latest key, and WAIT for every write of the batch. */
		private CompletionStage<List<Void>> acknowledgeAll(List<String> keys) {
			String key = keys.get(keys.size() - 1);
			this.markerKey = key;
			return acknowledged(key).handle((acked, failure) -> {
				if (failure != null) {
					throw unconfirmed(failure);
				}
				return Collections.nCopies(keys.size(), (Void) null);
			});
		}

		/** Writes a marker beside {@code key} and waits for the replicas; fails when too few acknowledge. */
		private CompletionStage<Long> acknowledged(String key) {
			return commands(this.name).thenCompose((commands) -> {
				commands.set((key + ":ack").getBytes(StandardCharsets.UTF_8), MARKER_VALUE,
						SetArgs.Builder.px(MARKER_MILLIS));
				return commands.waitForReplication(ReplicaAcks.this.replicas, ReplicaAcks.this.timeout.toMillis());
			}).thenApply((acked) -> {
				if (acked < ReplicaAcks.this.replicas) {
					throw new UnconfirmedWriteException(acked + " of " + ReplicaAcks.this.replicas
							+ " replica(s) of Redis " + describe() + " acknowledged within "
							+ ReplicaAcks.this.timeout.toMillis() + " ms");
				}
				answeredAgain();
				return acked;
			});
		}

		private RuntimeException unconfirmed(Throwable failure) {
			Throwable cause = (failure instanceof CompletionException && failure.getCause() != null)
					? failure.getCause() : failure;
			RuntimeException unconfirmed = (cause instanceof UnconfirmedWriteException own) ? own
					: new UnconfirmedWriteException("Could not confirm the limiter's writes with the replicas of Redis "
							+ describe() + ": " + LimiterConnector.message(cause), cause);
			startLagging(String.valueOf(unconfirmed.getMessage()));
			return unconfirmed;
		}

		private void startLagging(String reason) {
			this.why = reason;
			if (this.lagging) {
				return;
			}
			this.lagging = true;
			logger.warn("The replicas of Redis " + describe() + " do not acknowledge the rate limiter's writes ("
					+ reason + "); durable writes there follow their limits' failure modes until they do");
			probeLater();
		}

		private void answeredAgain() {
			if (this.lagging) {
				this.lagging = false;
				logger.info("The replicas of Redis " + describe()
						+ " acknowledge the rate limiter's writes again; durable writes are back on it");
			}
		}

		/** Probes a lagging node with a marker and WAIT of its own, every probe pause until it answers. */
		private void probeLater() {
			EventExecutorGroup executor = executor();
			if (executor == null || ReplicaAcks.this.closed || this.probing) {
				return;
			}
			this.probing = true;
			executor.schedule(() -> {
				String key = this.markerKey;
				acknowledged(key).whenComplete((acked, failure) -> {
					this.probing = false;
					if (failure != null) {
						this.why = LimiterConnector.message(failure);
						probeLater();
					}
				});
			}, PROBE_PAUSE.toMillis(), TimeUnit.MILLISECONDS);
		}

	}

}
