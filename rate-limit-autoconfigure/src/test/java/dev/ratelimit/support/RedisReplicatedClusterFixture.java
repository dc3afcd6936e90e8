package dev.ratelimit.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A real Redis Cluster of three masters, each with one replica, for failover
 * tests: six {@code redis-server} processes on free loopback ports, with a
 * {@code cluster-node-timeout} of 1000 ms so that a killed master is replaced
 * by its replica in a couple of seconds.
 * <p>
 * Built like {@link RedisClusterFixture} (raw {@code CLUSTER} commands, only
 * {@code redis-server} needed), then each replica is attached to its master
 * with {@code CLUSTER REPLICATE}. {@link #start()} returns once every node
 * reports {@code cluster_state:ok}, sees all six nodes connected and agrees on
 * who serves which slots, and every replica is in sync; a cluster that does
 * not form within 20 seconds throws with every node's log: tests fail, they
 * are never skipped. Startup takes about two seconds, most of it the delay
 * Redis imposes before a master turns writable. In sync means that writes
 * reach the replica, which its {@code master_link_status:up} does not: after
 * a diskless full sync (Redis 7's default) a master streams nothing to the
 * replica until the replica's first {@code REPLCONF ACK}, up to a second
 * later. The fixture writes and deletes a probe key in one transaction and
 * waits for {@code WAIT} to count the replicas.
 * <p>
 * <strong>Not shared.</strong> Tests kill, freeze and fail over these nodes,
 * so each test class (or test) starts its own and closes it; a shutdown hook
 * kills whatever a failed test left running. {@link RedisClusterFixture} stays
 * the shared, replica-less cluster for tests that fail nothing over.
 * <pre class="code">
 * try (RedisReplicatedClusterFixture cluster = RedisReplicatedClusterFixture.start()) {
 *     int master = cluster.masterPortForSlot(ClusterSlotHashUtil.calculateSlot("rl:{user-1}:tokens"));
 *     cluster.killMaster(master);
 *     int replacement = cluster.awaitPromotion(master, Duration.ofSeconds(10));
 *     // ... the limiter's keys of that slot now live on replacement
 * }
 * </pre>
 * <p>
 * <strong>Shards.</strong> Slots are split evenly and in order into three
 * shards: 0..5460, 5461..10921 and 10922..16383. The node at
 * {@code ports().get(i)} starts as the master of shard {@code i} and the node
 * at {@code ports().get(i + 3)} as its replica; the two stay in that shard
 * whatever their roles later ({@code cluster-allow-replica-migration no}).
 * {@link #masterPorts()}, {@link #replicaPorts()} and
 * {@link #masterPortForSlot(int)} read the current roles from the cluster.
 * <p>
 * <strong>Timing</strong>, measured on Redis 7.0 (2 cores): a master killed
 * with {@link #killMaster(int)} is replaced 2.2 to 2.7 s later, counted until
 * every node agrees and reports {@code cluster_state:ok} (one node timeout
 * until its peers flag it, then the replica's election delay of 0.5 to 1 s);
 * {@link #failover(int)} ({@code CLUSTER FAILOVER} on the replica) returns
 * within 60 to 180 ms, the old master following the new one as its replica.
 * A client of the old master stays connected throughout: a write during the
 * handover waits some 20 to 50 ms (the master pauses writes until its replica
 * has caught up), then every command on the shard's keys is answered
 * {@code -MOVED} to the new master, so no write is lost. {@link #restart(int)}
 * of a replaced master returns about a second later, once writes reach it.
 * Each node runs with {@code cluster-require-full-coverage} as
 * {@link #start(boolean)} says.
 */
public final class RedisReplicatedClusterFixture implements AutoCloseable {

	/** The number of hash slots of every Redis Cluster. */
	public static final int SLOTS = 16384;

	private static final int SHARDS = 3;

	/** Redis listens for its cluster bus on the client port plus this offset. */
	private static final int BUS_PORT_OFFSET = 10000;

	private static final int NODE_TIMEOUT_MILLIS = 1000;

	private static final int ADDSLOTS_CHUNK = 2048;

	private static final Duration FORM_TIMEOUT = Duration.ofSeconds(20);

	/** Generous: a failover or a rejoin takes seconds, on a busy machine a few more. */
	private static final Duration CHANGE_TIMEOUT = Duration.ofSeconds(30);

	private static final int START_ATTEMPTS = 3;

	/**
	 * Per shard, a key of its slots, written and deleted in one transaction to
	 * see that writes reach the shard's replicas.
	 */
	private static final List<String> PROBE_KEYS = probeKeys();

	private final Path directory;

	private final boolean requireFullCoverage;

	private final List<RedisProcess> nodes = new ArrayList<>();

	private final Thread shutdownHook;

	private boolean closed;

	private RedisReplicatedClusterFixture(Path directory, boolean requireFullCoverage) {
		this.directory = directory;
		this.requireFullCoverage = requireFullCoverage;
		this.shutdownHook = new Thread(this::stopNodes, "redis-replicated-cluster-fixture-stop");
		Runtime.getRuntime().addShutdownHook(this.shutdownHook);
	}

	/**
	 * Starts a new cluster with {@code cluster-require-full-coverage yes}
	 * (Redis's default: while a shard has no master, the whole cluster refuses
	 * commands) and waits until it is usable.
	 * @return the running cluster, to be closed by the caller
	 * @throws IllegalStateException if no cluster could be formed
	 */
	public static RedisReplicatedClusterFixture start() {
		return start(true);
	}

	/**
	 * Starts a new cluster and waits until it is usable.
	 * @param requireFullCoverage the nodes' {@code cluster-require-full-coverage}:
	 * with {@code false}, the shards that have a master keep serving while
	 * another has none
	 * @return the running cluster, to be closed by the caller
	 * @throws IllegalStateException if no cluster could be formed
	 */
	public static RedisReplicatedClusterFixture start(boolean requireFullCoverage) {
		IllegalStateException failure = null;
		// A probed port can be taken by someone else before redis-server binds it: retry.
		for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
			try {
				return start(requireFullCoverage, RedisProcess.freePorts(2 * SHARDS, BUS_PORT_OFFSET));
			}
			catch (IllegalStateException ex) {
				if (failure != null) {
					ex.addSuppressed(failure);
				}
				failure = ex;
			}
		}
		throw failure;
	}

	private static RedisReplicatedClusterFixture start(boolean requireFullCoverage, List<Integer> ports) {
		Path directory;
		try {
			directory = Files.createTempDirectory("redis-replicated-cluster-");
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot create a directory for the cluster", ex);
		}
		RedisReplicatedClusterFixture cluster = new RedisReplicatedClusterFixture(directory, requireFullCoverage);
		try {
			for (int i = 0; i < ports.size(); i++) {
				cluster.nodes.add(cluster.startNode(ports.get(i)));
			}
			cluster.form();
			return cluster;
		}
		catch (RuntimeException ex) {
			String logs = cluster.logs();
			cluster.close();
			throw new IllegalStateException("Cannot start a replicated Redis Cluster on ports " + ports + ": " + ex
					+ "\n" + logs, ex);
		}
	}

	private RedisProcess startNode(int port) {
		String p = Integer.toString(port);
		Path data = this.directory.resolve("node-" + p);
		try {
			Files.createDirectories(data);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot create " + data, ex);
		}
		List<String> arguments = List.of("--port", p, "--bind", "127.0.0.1", "--cluster-enabled", "yes",
				// Kept across restarts: a restarted node comes back with its identity and learns what changed.
				"--cluster-config-file", this.directory.resolve("nodes-" + p + ".conf").toString(),
				"--cluster-node-timeout", Integer.toString(NODE_TIMEOUT_MILLIS),
				// Nodes announce 127.0.0.1 from the start instead of learning their address from peers.
				"--cluster-announce-ip", "127.0.0.1",
				"--cluster-require-full-coverage", this.requireFullCoverage ? "yes" : "no",
				// Each replica stays in its shard, so that the shards' members are known.
				"--cluster-allow-replica-migration", "no", "--dir", data.toString(), "--save", "", "--appendonly",
				"no",
				// Redis 7 waits 5 s for more replicas before a diskless full sync: nobody else is coming.
				"--repl-diskless-sync-delay", "0",
				// Never an RDB on disk, that a restart would load: a killed node comes back empty.
				"--repl-diskless-load", "swapdb");
		return RedisProcess.start(port, "cluster node", arguments, this.directory,
				this.directory.resolve("redis-" + p + ".log"));
	}

	private void form() {
		for (int shard = 0; shard < SHARDS; shard++) {
			int port = this.nodes.get(shard).port();
			// Distinct epochs up front, as redis-cli does, so no epoch collision has to be resolved.
			expectOk(port, "CLUSTER", "SET-CONFIG-EPOCH", Integer.toString(shard + 1));
			// Redis 6.2 has no ADDSLOTSRANGE: list the slots, a chunk per command.
			for (int start = firstSlot(shard); start <= lastSlot(shard); start += ADDSLOTS_CHUNK) {
				int end = Math.min(lastSlot(shard), start + ADDSLOTS_CHUNK - 1);
				List<String> command = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS"));
				for (int slot = start; slot <= end; slot++) {
					command.add(Integer.toString(slot));
				}
				expectOk(port, command.toArray(String[]::new));
			}
		}
		int first = this.nodes.get(0).port();
		for (RedisProcess node : this.nodes.subList(1, this.nodes.size())) {
			expectOk(first, "CLUSTER", "MEET", "127.0.0.1", Integer.toString(node.port()));
		}
		for (int shard = 0; shard < SHARDS; shard++) {
			int master = this.nodes.get(shard).port();
			int replica = this.nodes.get(shard + SHARDS).port();
			String masterId = (String) RedisProcess.query(master, "CLUSTER", "MYID");
			// The replica must have finished its handshake with the master before it can follow it.
			await("port " + replica + " to replicate " + master, FORM_TIMEOUT, () -> {
				String reply = RedisProcess.call(replica, "CLUSTER", "REPLICATE", masterId);
				if (reply.startsWith("-ERR Unknown node")) {
					throw notYet(reply);
				}
				if (!reply.equals("+OK")) {
					throw new IllegalStateException("CLUSTER REPLICATE on port " + replica + " failed: " + reply);
				}
				return reply;
			});
		}
		await("the cluster to form", FORM_TIMEOUT, () -> {
			settle();
			for (RedisProcess node : this.nodes) {
				Map<String, String> info = infoFields(node.port(), "CLUSTER", "INFO");
				if (!"6".equals(info.get("cluster_known_nodes")) || !"3".equals(info.get("cluster_size"))) {
					throw notYet("port " + node.port() + " knows " + info.get("cluster_known_nodes")
							+ " nodes in shards " + info.get("cluster_size"));
				}
			}
			View view = view(this.nodes.get(0));
			for (int shard = 0; shard < SHARDS; shard++) {
				ClusterNode master = view.node(this.nodes.get(shard).port());
				ClusterNode replica = view.node(this.nodes.get(shard + SHARDS).port());
				if (!master.serves(firstSlot(shard)) || !replica.flags().contains("slave")
						|| !master.id().equals(replica.masterId())) {
					throw notYet("shard " + shard + " is not yet " + master.port() + " with replica " + replica.port()
							+ " in " + view);
				}
			}
			return this;
		});
	}

	/**
	 * Returns the client ports of all six nodes, on {@code 127.0.0.1}: the
	 * masters at start in slot order, then their replicas in the same order,
	 * whatever their roles now.
	 * @return the ports
	 */
	public List<Integer> ports() {
		return this.nodes.stream().map(RedisProcess::port).toList();
	}

	/**
	 * Returns the port of each shard's current master, in slot order, as the
	 * first running node sees the cluster.
	 * @return three ports
	 */
	public List<Integer> masterPorts() {
		View view = view(firstAvailable());
		List<Integer> masters = new ArrayList<>();
		for (int shard = 0; shard < SHARDS; shard++) {
			masters.add(view.ownerOf(firstSlot(shard)).port());
		}
		return masters;
	}

	/**
	 * Returns the ports of the nodes that are replicas now, in the slot order of
	 * their masters, as the first running node sees the cluster. A dead replica
	 * is still one; a dead master that was replaced is neither until it is
	 * restarted.
	 * @return the ports
	 */
	public List<Integer> replicaPorts() {
		View view = view(firstAvailable());
		List<Integer> replicas = new ArrayList<>();
		for (int shard = 0; shard < SHARDS; shard++) {
			ClusterNode master = view.ownerOf(firstSlot(shard));
			for (ClusterNode node : view.nodes()) {
				if (node.flags().contains("slave") && master.id().equals(node.masterId())) {
					replicas.add(node.port());
				}
			}
		}
		return replicas;
	}

	/**
	 * Returns the port of a replica of the given master, as the first running
	 * node sees the cluster.
	 * @param masterPort the master's port
	 * @return the replica's port
	 * @throws IllegalStateException if the master has no replica
	 */
	public int replicaOf(int masterPort) {
		View view = view(firstAvailable());
		ClusterNode master = view.node(masterPort);
		return view.nodes()
			.stream()
			.filter((node) -> node.flags().contains("slave") && master.id().equals(node.masterId()))
			.map(ClusterNode::port)
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("Port " + masterPort + " has no replica in " + view));
	}

	/**
	 * Returns the port of the master serving a slot, as the first running node
	 * sees the cluster ({@code CLUSTER NODES}). After {@link #awaitPromotion},
	 * {@link #failover(int)} or {@link #restart(int)} every node agrees.
	 * @param slot the slot, 0 to 16383
	 * @return the master's port
	 */
	public int masterPortForSlot(int slot) {
		return view(firstAvailable()).ownerOf(slot).port();
	}

	/**
	 * Kills a master with {@code SIGKILL} and waits for the process to end. Its
	 * replica takes over about two seconds later: see {@link #awaitPromotion}.
	 * @param port the master's port
	 * @throws IllegalStateException if the node is not a master now
	 */
	public void killMaster(int port) {
		if (!masterPorts().contains(port)) {
			throw new IllegalStateException("Port " + port + " is not a master; the masters are " + masterPorts());
		}
		kill(port);
	}

	/**
	 * Kills any node with {@code SIGKILL} and waits for the process to end.
	 * @param port the node's port
	 */
	public void kill(int port) {
		node(port).kill();
	}

	/**
	 * Waits until the shard of a (killed or frozen) master is served by another
	 * node in the view of every running node, and every running node reports
	 * {@code cluster_state:ok}.
	 * @param oldMasterPort the replaced master's port
	 * @param timeout how long to wait
	 * @return the new master's port
	 * @throws IllegalStateException if that does not happen in time
	 */
	public int awaitPromotion(int oldMasterPort, Duration timeout) {
		int slot = firstSlot(shardOf(oldMasterPort));
		return await("a new master for the shard of port " + oldMasterPort, timeout, () -> {
			int master = agreedOwner(slot);
			if (master == oldMasterPort) {
				throw notYet("port " + oldMasterPort + " still serves slot " + slot);
			}
			String role = RedisProcess.info(master, "replication", "role");
			if (!"master".equals(role)) {
				throw notYet("port " + master + " serves slot " + slot + " but has role " + role);
			}
			requireStateOk();
			return master;
		});
	}

	/**
	 * Sends {@code CLUSTER FAILOVER} to a replica and returns once every
	 * running node sees it as its shard's master, the old master (if running)
	 * follows it as a replica in sync, and the cluster is settled as after
	 * {@link #restart(int)}.
	 * @param replicaPort the replica's port
	 * @return the old master's port
	 * @throws IllegalStateException if the node is not a replica, or the
	 * failover does not complete within 30 s
	 */
	public int failover(int replicaPort) {
		int slot = firstSlot(shardOf(replicaPort));
		int oldMaster = masterPortForSlot(slot);
		if (oldMaster == replicaPort) {
			throw new IllegalStateException("Port " + replicaPort + " is a master already");
		}
		String reply = call(replicaPort, "CLUSTER", "FAILOVER");
		if (!reply.equals("+OK")) {
			throw new IllegalStateException("CLUSTER FAILOVER on port " + replicaPort + " failed: " + reply);
		}
		await("port " + replicaPort + " to take over from port " + oldMaster, CHANGE_TIMEOUT, () -> {
			int master = agreedOwner(slot);
			if (master != replicaPort) {
				throw notYet("port " + master + " still serves slot " + slot);
			}
			settle();
			return master;
		});
		return oldMaster;
	}

	/**
	 * Starts a killed node again with its original command line and cluster
	 * config file, then waits until the cluster is settled: every running node
	 * reports {@code cluster_state:ok}, sees every running node connected and
	 * unflagged and agrees on each shard's master, every running node serves
	 * slots or is a replica, and every running replica is in sync: its link is
	 * up and a write to its master reaches it. A killed master whose replica took over thus comes back, empty,
	 * as that replica's replica.
	 * @param port the node's port
	 * @throws IllegalStateException if the node is running, or the cluster does
	 * not settle within 30 s
	 */
	public void restart(int port) {
		node(port).restart(this.directory);
		await("the cluster to settle after restarting port " + port, CHANGE_TIMEOUT, () -> {
			settle();
			return port;
		});
	}

	/**
	 * Waits until the cluster is settled as after {@link #restart(int)}: for
	 * a frozen master's return, say, which follows its replica once thawed.
	 * @param timeout how long to wait
	 * @throws IllegalStateException if it does not settle in time
	 */
	public void awaitSettled(Duration timeout) {
		await("the cluster to settle", timeout, () -> {
			settle();
			return this;
		});
	}

	/**
	 * Moves a slot from its master to another master under whatever load there
	 * is, as {@code redis-cli --cluster reshard} does: the target
	 * {@code IMPORTING}, the source {@code MIGRATING}, then the slot's keys
	 * {@code MIGRATE}d one at a time (so that callers meet a slot half moved:
	 * {@code ASK} for a key already gone, {@code TRYAGAIN} for a script whose
	 * keys are on both sides), then {@code SETSLOT NODE} on every master.
	 * @param slot the slot
	 * @param targetPort the master that takes it
	 * @return how many keys moved
	 */
	public int migrateSlot(int slot, int targetPort) {
		int source = masterPortForSlot(slot);
		if (source == targetPort) {
			throw new IllegalStateException("Slot " + slot + " is on port " + targetPort + " already");
		}
		String sourceId = (String) RedisProcess.query(source, "CLUSTER", "MYID");
		String targetId = (String) RedisProcess.query(targetPort, "CLUSTER", "MYID");
		String number = Integer.toString(slot);
		RedisProcess.query(targetPort, "CLUSTER", "SETSLOT", number, "IMPORTING", sourceId);
		RedisProcess.query(source, "CLUSTER", "SETSLOT", number, "MIGRATING", targetId);
		int moved = 0;
		while (true) {
			List<?> keys = (List<?>) RedisProcess.query(source, "CLUSTER", "GETKEYSINSLOT", number, "1");
			if (keys.isEmpty()) {
				break;
			}
			RedisProcess.query(source, "MIGRATE", "127.0.0.1", Integer.toString(targetPort), "", "0", "5000", "KEYS",
					String.valueOf(keys.get(0)));
			moved++;
		}
		// The target first, then the source, then the others: as redis-cli does.
		RedisProcess.query(targetPort, "CLUSTER", "SETSLOT", number, "NODE", targetId);
		RedisProcess.query(source, "CLUSTER", "SETSLOT", number, "NODE", targetId);
		for (int port : masterPorts()) {
			if (port != targetPort && port != source) {
				RedisProcess.query(port, "CLUSTER", "SETSLOT", number, "NODE", targetId);
			}
		}
		awaitSettled(CHANGE_TIMEOUT);
		return moved;
	}

	/**
	 * Freezes a node with {@code SIGSTOP}: its connections stay open but
	 * nothing is answered. A master frozen for longer than the node timeout is
	 * failed over. This fixture's own queries skip frozen nodes.
	 * @param port the node's port
	 */
	public void pause(int port) {
		node(port).pause();
	}

	/**
	 * Thaws a node frozen by {@link #pause(int)} with {@code SIGCONT}.
	 * @param port the node's port
	 */
	public void resume(int port) {
		node(port).resume();
	}

	/**
	 * Sends one command to one node on a fresh connection and returns the first
	 * line of the reply: enough for status, error and integer replies. The node
	 * does not follow redirections: a key it does not serve answers
	 * {@code -MOVED <slot> 127.0.0.1:<port>}.
	 * @param port the node's port
	 * @param arguments the command and its arguments
	 * @return the first reply line, such as {@code +OK}, {@code :1} or {@code -MOVED ...}
	 */
	public String call(int port, String... arguments) {
		return RedisProcess.call(port, arguments);
	}

	/**
	 * Sends one command to one node on a fresh connection and returns its whole
	 * reply as text, for the commands that answer a status or a bulk string:
	 * {@code CLUSTER NODES}, {@code CLUSTER INFO}, {@code INFO}, {@code GET}.
	 * @param port the node's port
	 * @param arguments the command and its arguments
	 * @return the reply, or {@code null} for nil
	 * @throws IllegalStateException if the node answers with an error
	 */
	public String query(int port, String... arguments) {
		Object reply = RedisProcess.query(port, arguments);
		return (reply != null) ? reply.toString() : null;
	}

	/**
	 * Removes every key from every master (and so from the replicas).
	 */
	public void flushAll() {
		for (int port : masterPorts()) {
			String reply = call(port, "FLUSHALL");
			if (!reply.equals("+OK")) {
				throw new IllegalStateException("FLUSHALL on port " + port + " failed: " + reply);
			}
		}
	}

	/**
	 * Creates the connection factory production uses for this cluster: the
	 * limiter's own (see {@link #newEvalShaConnectionFactory()} for its
	 * options), connected, with its function library loaded on every master,
	 * so that the scripts run as {@code FCALL}. The caller destroys it.
	 * @return the connection factory
	 */
	public LettuceConnectionFactory newConnectionFactory() {
		return LimiterFactories.withFunctions(factory());
	}

	/**
	 * Creates a started, plain Lettuce connection factory for this cluster,
	 * seeded with all six nodes and refreshing its topology on {@code MOVED},
	 * {@code ASK} and reconnects, as {@link RedisClusterFixture}'s does, on
	 * which the limiter sends its scripts as {@code EVALSHA}. The caller
	 * destroys it.
	 * @return the connection factory
	 */
	public LettuceConnectionFactory newEvalShaConnectionFactory() {
		LettuceConnectionFactory factory = factory();
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	private LettuceConnectionFactory factory() {
		RedisClusterConfiguration configuration = new RedisClusterConfiguration();
		for (int port : ports()) {
			configuration.clusterNode("127.0.0.1", port);
		}
		ClusterTopologyRefreshOptions refresh = ClusterTopologyRefreshOptions.builder()
			.enableAllAdaptiveRefreshTriggers()
			.build();
		ClusterClientOptions options = ClusterClientOptions.builder()
			.topologyRefreshOptions(refresh)
			.timeoutOptions(TimeoutOptions.enabled())
			.build();
		LettuceClientConfiguration client = LettuceClientConfiguration.builder()
			.clientOptions(options)
			.commandTimeout(Duration.ofSeconds(5))
			.build();
		return new LettuceConnectionFactory(configuration, client);
	}

	/**
	 * Kills every node at once, waits for the processes to end and deletes
	 * their files. Calling it again does nothing.
	 */
	@Override
	public synchronized void close() {
		if (this.closed) {
			return;
		}
		this.closed = true;
		stopNodes();
		RedisProcess.deleteDirectory(this.directory);
		try {
			Runtime.getRuntime().removeShutdownHook(this.shutdownHook);
		}
		catch (IllegalStateException ex) {
			// The JVM is shutting down: the hook runs or has run, and finds nothing left.
		}
	}

	private void stopNodes() {
		for (RedisProcess node : this.nodes) {
			node.kill();
		}
	}

	/**
	 * Returns when the cluster is settled (see {@link #restart(int)}), else
	 * throws {@link RedisProcess.NotYet} saying what is not.
	 */
	private void settle() {
		requireStateOk();
		List<RedisProcess> running = available();
		View reference = view(running.get(0));
		for (RedisProcess node : running) {
			View view = (node == running.get(0)) ? reference : view(node);
			for (RedisProcess other : running) {
				ClusterNode seen = view.node(other.port());
				if (seen == null || !seen.linkConnected() || seen.flags().contains("fail")
						|| seen.flags().contains("fail?") || seen.flags().contains("handshake")
						|| seen.flags().contains("noaddr")) {
					throw notYet("port " + node.port() + " sees port " + other.port() + " as " + seen);
				}
			}
			for (int shard = 0; shard < SHARDS; shard++) {
				int slot = firstSlot(shard);
				int owner = view.ownerOf(slot).port();
				int expected = reference.ownerOf(slot).port();
				if (owner != expected) {
					throw notYet("port " + node.port() + " sees port " + owner + " serving slot " + slot + ", port "
							+ running.get(0).port() + " sees port " + expected);
				}
			}
		}
		for (int shard = 0; shard < SHARDS; shard++) {
			ClusterNode master = reference.ownerOf(firstSlot(shard));
			long replicas = running.stream()
				.map((node) -> reference.node(node.port()))
				.filter((node) -> node.flags().contains("slave") && master.id().equals(node.masterId()))
				.count();
			if (replicas > 0 && !RedisProcess.streamsTo(master.port(), (int) replicas, PROBE_KEYS.get(shard))) {
				throw notYet("writes to " + master.port() + " do not reach its " + replicas + " replica(s) yet");
			}
		}
		for (RedisProcess node : running) {
			ClusterNode seen = reference.node(node.port());
			// A master that lost its slots (a thawed or restarted old master) becomes a replica a moment later.
			if (seen.flags().contains("master") && seen.slots().isEmpty()) {
				throw notYet("port " + node.port() + " is a master without slots in " + reference);
			}
			if (seen.flags().contains("slave")) {
				int master = reference.owner(seen.masterId()).port();
				Map<String, String> replication = infoFields(node.port(), "INFO", "replication");
				if (!Integer.toString(master).equals(replication.get("master_port"))
						|| !"up".equals(replication.get("master_link_status"))) {
					throw notYet("replica " + node.port() + " is not in sync with " + master + ": master_port "
							+ replication.get("master_port") + ", master_link_status "
							+ replication.get("master_link_status"));
				}
			}
		}
	}

	private void requireStateOk() {
		for (RedisProcess node : available()) {
			String state = infoFields(node.port(), "CLUSTER", "INFO").get("cluster_state");
			if (!"ok".equals(state)) {
				throw notYet("port " + node.port() + " reports cluster_state:" + state);
			}
		}
	}

	/**
	 * Returns the master serving a slot in the view of every running node, if
	 * they agree.
	 */
	private int agreedOwner(int slot) {
		Integer agreed = null;
		for (RedisProcess node : available()) {
			int owner = view(node).ownerOf(slot).port();
			if (agreed != null && agreed != owner) {
				throw notYet("nodes disagree on who serves slot " + slot + ": ports " + agreed + " and " + owner);
			}
			agreed = owner;
		}
		if (agreed == null) {
			throw new IllegalStateException("No node is running");
		}
		return agreed;
	}

	private List<RedisProcess> available() {
		List<RedisProcess> running = this.nodes.stream().filter(RedisProcess::isAvailable).toList();
		if (running.isEmpty()) {
			throw new IllegalStateException("No node of the cluster is running");
		}
		return running;
	}

	private RedisProcess firstAvailable() {
		return available().get(0);
	}

	private RedisProcess node(int port) {
		return this.nodes.stream()
			.filter((node) -> node.port() == port)
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("No node of this cluster on port " + port + " (they are "
					+ ports() + ")"));
	}

	private int shardOf(int port) {
		return ports().indexOf(node(port).port()) % SHARDS;
	}

	private static List<String> probeKeys() {
		List<String> keys = new ArrayList<>();
		for (int shard = 0; shard < SHARDS; shard++) {
			for (int i = 0;; i++) {
				String key = "ratelimit-fixture:replication-probe:{" + i + "}";
				int slot = ClusterSlotHashUtil.calculateSlot(key);
				if (slot >= firstSlot(shard) && slot <= lastSlot(shard)) {
					keys.add(key);
					break;
				}
			}
		}
		return List.copyOf(keys);
	}

	private static int firstSlot(int shard) {
		return shard * SLOTS / SHARDS;
	}

	private static int lastSlot(int shard) {
		return (shard + 1) * SLOTS / SHARDS - 1;
	}

	private void expectOk(int port, String... arguments) {
		String reply = call(port, arguments);
		if (!reply.equals("+OK")) {
			throw new IllegalStateException(String.join(" ", List.of(arguments).subList(0, 2)) + " on port "
					+ port + " failed: " + reply);
		}
	}

	private static View view(RedisProcess node) {
		return View.parse(node.port(), (String) RedisProcess.query(node.port(), "CLUSTER", "NODES"));
	}

	/** Fields of {@code INFO <section>} or {@code CLUSTER INFO}: both answer name:value lines. */
	private static Map<String, String> infoFields(int port, String... command) {
		Map<String, String> fields = new HashMap<>();
		((String) RedisProcess.query(port, command)).lines().forEach((line) -> {
			int colon = line.indexOf(':');
			if (colon > 0) {
				fields.put(line.substring(0, colon), line.substring(colon + 1).strip());
			}
		});
		return fields;
	}

	private <T> T await(String what, Duration timeout, Supplier<T> attempt) {
		return RedisProcess.await(what, timeout, attempt, this::logs);
	}

	private static RedisProcess.NotYet notYet(String problem) {
		return new RedisProcess.NotYet(problem);
	}

	private String logs() {
		StringBuilder logs = new StringBuilder();
		for (RedisProcess node : this.nodes) {
			logs.append(node.describedLog());
		}
		return logs.toString();
	}

	/**
	 * One line of {@code CLUSTER NODES}:
	 * {@code <id> <ip:port@cport[,hostname]> <flags> <master> <ping> <pong> <epoch> <link> <slots>...}.
	 */
	private record ClusterNode(String id, int port, Set<String> flags, String masterId, boolean linkConnected,
			List<int[]> slots, String line) {

		static ClusterNode parse(String line) {
			String[] fields = line.strip().split(" ");
			String address = fields[1];
			int port = Integer.parseInt(address.substring(address.indexOf(':') + 1, address.indexOf('@')));
			List<int[]> slots = new ArrayList<>();
			for (int i = 8; i < fields.length; i++) {
				// Slots being migrated show as [slot->-id] or [slot-<-id]: none here, and not served yet.
				if (!fields[i].startsWith("[")) {
					String[] range = fields[i].split("-");
					int first = Integer.parseInt(range[0]);
					slots.add(new int[] { first, (range.length > 1) ? Integer.parseInt(range[1]) : first });
				}
			}
			return new ClusterNode(fields[0], port, Set.of(fields[2].split(",")), fields[3],
					fields[7].equals("connected"), slots, line.strip());
		}

		boolean serves(int slot) {
			return this.slots.stream().anyMatch((range) -> range[0] <= slot && slot <= range[1]);
		}

		@Override
		public String toString() {
			return this.line;
		}

	}

	/** One node's view of the cluster. */
	private record View(int port, List<ClusterNode> nodes) {

		static View parse(int port, String text) {
			return new View(port, text.lines().filter((line) -> !line.isBlank()).map(ClusterNode::parse).toList());
		}

		ClusterNode node(int port) {
			return this.nodes.stream().filter((node) -> node.port() == port).findFirst().orElse(null);
		}

		ClusterNode owner(String id) {
			return this.nodes.stream()
				.filter((node) -> node.id().equals(id))
				.findFirst()
				.orElseThrow(() -> notYet("port " + this.port + " does not know node " + id));
		}

		ClusterNode ownerOf(int slot) {
			return this.nodes.stream()
				.filter((node) -> node.flags().contains("master") && node.serves(slot))
				.findFirst()
				.orElseThrow(() -> notYet("port " + this.port + " sees nobody serving slot " + slot));
		}

		@Override
		public String toString() {
			return "the view of port " + this.port + ":\n" + String.join("\n",
					this.nodes.stream().map(ClusterNode::toString).toList());
		}

	}

}
