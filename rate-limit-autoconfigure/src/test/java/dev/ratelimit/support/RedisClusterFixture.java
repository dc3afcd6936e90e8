package dev.ratelimit.support;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.redis.RedisLimiterConnection;

/**
 * A real Redis Cluster of three masters (no replicas), each a
 * {@code redis-server} process on a free local port, for tests that must prove
 * the product works when keys live on different nodes.
 * <p>
 * Only {@code redis-server} is needed (the binary {@link RedisServerFixture}
 * finds, so the embedded fallback works too): the cluster is built with raw
 * {@code CLUSTER SET-CONFIG-EPOCH}, {@code CLUSTER ADDSLOTS} and
 * {@code CLUSTER MEET} commands, then polled until every node reports
 * {@code cluster_state:ok} and sees all three masters. A cluster that cannot
 * form within 20 seconds throws with the nodes' logs: tests fail, they are
 * never skipped. Startup takes about two seconds, most of it the delay Redis
 * imposes before a master turns writable.
 * <p>
 * Test classes share one cluster per JVM, stopped by a shutdown hook, and clear
 * it before each test:
 * <pre class="code">
 * private static final RedisClusterFixture cluster = RedisClusterFixture.shared();
 *
 * private LettuceConnectionFactory factory;
 *
 * &#64;BeforeEach
 * void setUp() {
 *     cluster.flushAll();
 *     this.factory = cluster.newConnectionFactory();
 * }
 *
 * &#64;AfterEach
 * void tearDown() {
 *     this.factory.destroy();
 * }
 * </pre>
 * Slots are split evenly and in order: the node at {@code ports().get(0)} owns
 * slots 0..5460, the second 5461..10921, the third 10922..16383. Remember that
 * a Lua script or multi-key command whose keys hash to different slots fails
 * with {@code CROSSSLOT}: keys used together need a common hash tag, such as
 * {@code rl:{user-1}:tokens} and {@code rl:{user-1}:ts}.
 */
public final class RedisClusterFixture implements AutoCloseable {

	/** The number of hash slots of every Redis Cluster. */
	public static final int SLOTS = 16384;

	private static final int MASTERS = 3;

	/** Redis listens for its cluster bus on the client port plus this offset. */
	private static final int BUS_PORT_OFFSET = 10000;

	/**
	 * Client ports are drawn from here: below the usual ephemeral range (32768+)
	 * even with the bus offset, so outgoing connections rarely steal them.
	 */
	private static final int MIN_PORT = 12000;

	private static final int MAX_PORT = 22000;

	private static final int ADDSLOTS_CHUNK = 2048;

	private static final long NODE_START_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);

	private static final long CLUSTER_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(20);

	private static final long POLL_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

	private static final int START_ATTEMPTS = 3;

	private static RedisClusterFixture shared;

	private final Path directory;

	private final List<Node> nodes;

	private final List<Integer> ports;

	private RedisClusterFixture(Path directory, List<Integer> ports) {
		this.directory = directory;
		this.nodes = new ArrayList<>();
		this.ports = List.copyOf(ports);
	}

	/**
	 * Returns the cluster shared by every test class of this JVM, starting it on
	 * first use (or again, if one of its nodes died).
	 * @return the shared cluster
	 */
	public static synchronized RedisClusterFixture shared() {
		if (shared == null || !shared.isAlive()) {
			if (shared != null) {
				shared.close();
			}
			RedisClusterFixture started = start();
			Runtime.getRuntime().addShutdownHook(new Thread(started::close, "redis-cluster-fixture-stop"));
			shared = started;
		}
		return shared;
	}

	/**
	 * Starts a new cluster of three masters and waits until it is usable.
	 * @return the running cluster, to be closed by the caller
	 * @throws IllegalStateException if no cluster could be formed
	 */
	public static RedisClusterFixture start() {
		Path binary = RedisServerFixture.binary();
		IllegalStateException failure = null;
		// A probed port can be taken by someone else before redis-server binds it: retry.
		for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
			try {
				return start(binary, freePorts());
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

	private static RedisClusterFixture start(Path binary, List<Integer> ports) {
		Path directory;
		try {
			directory = Files.createTempDirectory("redis-cluster-");
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot create a directory for the cluster", ex);
		}
		RedisClusterFixture cluster = new RedisClusterFixture(directory, ports);
		try {
			for (int port : ports) {
				cluster.nodes.add(Node.start(binary, port, directory));
			}
			cluster.form();
			return cluster;
		}
		catch (RuntimeException ex) {
			String logs = cluster.logs();
			cluster.close();
			throw new IllegalStateException("Cannot start a Redis Cluster on ports " + ports + " with " + binary
					+ ": " + ex + "\n" + logs, ex);
		}
	}

	/**
	 * Returns the client ports of the masters, on {@code 127.0.0.1}, in slot
	 * order.
	 * @return the ports
	 */
	public List<Integer> ports() {
		return this.ports;
	}

	/**
	 * Creates the connection factory production uses for this cluster: the
	 * limiter's own (see {@link #newEvalShaConnectionFactory()} for its options),
	 * connected, with its function library loaded on every master, so that the
	 * scripts run as {@code FCALL}. The caller destroys it.
	 * @return the connection factory
	 */
	public LettuceConnectionFactory newConnectionFactory() {
		return LimiterFactories.withFunctions(factory());
	}

	/**
	 * Creates the limiter's own connection factory for this cluster, as
	 * {@link #newConnectionFactory()} does, its decisions coalesced or each a
	 * call of its own. The caller destroys it.
	 * @param coalescing whether decisions waiting at the same moment go as one call
	 * @return the connection factory
	 */
	public LettuceConnectionFactory newConnectionFactory(RedisLimiterConnection.Coalescing coalescing) {
		return LimiterFactories.withFunctions(factory(), coalescing);
	}

	/**
	 * Creates a started, plain Lettuce connection factory for this cluster,
	 * seeded with every node and refreshing its topology on {@code MOVED},
	 * {@code ASK} and reconnects, on which the limiter sends its scripts as
	 * {@code EVALSHA}. The caller destroys it.
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
		for (int port : this.ports) {
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
	 * Removes every key from every master.
	 */
	public void flushAll() {
		for (int port : this.ports) {
			String reply = call(port, "FLUSHALL");
			if (!reply.equals("+OK")) {
				throw new IllegalStateException("FLUSHALL on port " + port + " failed: " + reply);
			}
		}
	}

	/**
	 * Sends one command to one node on a fresh connection and returns the first
	 * line of the reply: enough for status, error and integer replies. The node
	 * does not follow redirections: a key it does not own answers
	 * {@code -MOVED <slot> 127.0.0.1:<port>}.
	 * @param port the node's port, one of {@link #ports()}
	 * @param arguments the command and its arguments
	 * @return the first reply line, such as {@code +OK}, {@code :1} or {@code -ERR ...}
	 */
	public String call(int port, String... arguments) {
		try (Socket socket = connect(port)) {
			Resp.send(socket.getOutputStream(), arguments);
			return Resp.readLine(socket.getInputStream());
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Redis on port " + port + " did not answer " + arguments[0], ex);
		}
	}

	/**
	 * Stops every node at once, waits for the processes to end and deletes their
	 * files. Calling it again does nothing.
	 */
	@Override
	public void close() {
		for (Node node : this.nodes) {
			node.process().destroyForcibly();
		}
		for (Node node : this.nodes) {
			try {
				node.process().waitFor(10, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		deleteDirectory();
	}

	private boolean isAlive() {
		return this.nodes.stream().allMatch((node) -> node.process().isAlive());
	}

	private void form() {
		for (Node node : this.nodes) {
			node.awaitPing();
		}
		for (int i = 0; i < this.nodes.size(); i++) {
			int port = this.nodes.get(i).port();
			// Distinct epochs up front, as redis-cli does, so no epoch collision has to be resolved.
			expectOk(port, "CLUSTER", "SET-CONFIG-EPOCH", Integer.toString(i + 1));
			int first = i * SLOTS / this.nodes.size();
			int last = (i + 1) * SLOTS / this.nodes.size() - 1;
			// Redis 6.2 has no ADDSLOTSRANGE: list the slots, a chunk per command.
			for (int start = first; start <= last; start += ADDSLOTS_CHUNK) {
				int end = Math.min(last, start + ADDSLOTS_CHUNK - 1);
				List<String> command = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS"));
				for (int slot = start; slot <= end; slot++) {
					command.add(Integer.toString(slot));
				}
				expectOk(port, command.toArray(String[]::new));
			}
		}
		for (Node node : this.nodes.subList(1, this.nodes.size())) {
			expectOk(this.ports.get(0), "CLUSTER", "MEET", "127.0.0.1", Integer.toString(node.port()));
		}
		awaitFormed();
	}

	private void awaitFormed() {
		long deadline = System.nanoTime() + CLUSTER_TIMEOUT_NANOS;
		String lastProblem = "not polled yet";
		while (System.nanoTime() - deadline < 0) {
			lastProblem = problem();
			if (lastProblem == null) {
				return;
			}
			// Polling a forming cluster: the only place a short pause is needed.
			LockSupport.parkNanos(POLL_PAUSE_NANOS);
		}
		throw new IllegalStateException("cluster did not form within 20s; last problem: " + lastProblem);
	}

	/**
	 * Checks every node's own view of the cluster.
	 * @return what is not ready yet, or {@code null} when the cluster is usable
	 */
	private String problem() {
		for (Node node : this.nodes) {
			if (!node.process().isAlive()) {
				throw new IllegalStateException("redis-server on port " + node.port() + " exited with "
						+ node.process().exitValue());
			}
			String info = query(node.port(), "CLUSTER", "INFO");
			for (String expected : List.of("cluster_state:ok", "cluster_slots_assigned:" + SLOTS,
					"cluster_known_nodes:" + MASTERS, "cluster_size:" + MASTERS)) {
				if (!info.lines().anyMatch(expected::equals)) {
					return "port " + node.port() + " lacks " + expected + " in CLUSTER INFO:\n" + info;
				}
			}
			String view = query(node.port(), "CLUSTER", "NODES");
			Set<Integer> masters = new HashSet<>();
			for (String line : view.strip().split("\n")) {
				// <id> <ip:port@cport[,hostname]> <flags> <master> <ping> <pong> <epoch> <link> <slots>...
				String[] fields = line.strip().split(" ");
				List<String> flags = (fields.length > 7) ? List.of(fields[2].split(",")) : List.of();
				if (!flags.contains("master") || flags.contains("handshake") || flags.contains("noaddr")
						|| flags.contains("fail") || flags.contains("fail?") || !fields[7].equals("connected")
						|| !fields[1].startsWith("127.0.0.1:")) {
					return "port " + node.port() + " does not see a connected master in: " + line;
				}
				masters.add(Integer.parseInt(fields[1].substring("127.0.0.1:".length(), fields[1].indexOf('@'))));
			}
			if (!masters.equals(Set.copyOf(this.ports))) {
				return "port " + node.port() + " sees masters " + masters + " in CLUSTER NODES:\n" + view;
			}
		}
		return null;
	}

	private void expectOk(int port, String... arguments) {
		String reply = call(port, arguments);
		if (!reply.equals("+OK")) {
			throw new IllegalStateException(String.join(" ", List.of(arguments).subList(0, 2)) + " on port "
					+ port + " failed: " + reply);
		}
	}

	/**
	 * Sends one command and returns a whole status or bulk string reply.
	 */
	private String query(int port, String... arguments) {
		try (Socket socket = connect(port)) {
			Resp.send(socket.getOutputStream(), arguments);
			InputStream in = new BufferedInputStream(socket.getInputStream());
			String line = Resp.readLine(in);
			if (!line.startsWith("$")) {
				if (line.startsWith("-")) {
					throw new IllegalStateException(String.join(" ", arguments) + " on port " + port + " failed: "
							+ line);
				}
				return line.substring(1);
			}
			int length = Integer.parseInt(line.substring(1));
			byte[] bulk = in.readNBytes(Math.max(length, 0));
			if (bulk.length < length) {
				throw new IOException("connection closed in a bulk reply");
			}
			return new String(bulk, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Redis on port " + port + " did not answer " + arguments[0], ex);
		}
	}

	private String logs() {
		StringBuilder logs = new StringBuilder();
		for (Node node : this.nodes) {
			logs.append("--- redis-server on port ").append(node.port()).append(": ").append(node.command());
			logs.append('\n').append(node.logText()).append('\n');
		}
		return logs.toString();
	}

	private void deleteDirectory() {
		if (!Files.exists(this.directory)) {
			return;
		}
		try (Stream<Path> files = Files.walk(this.directory)) {
			for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
				Files.deleteIfExists(file);
			}
		}
		catch (IOException ex) {
			// Best effort: a leftover temporary directory does not fail a test.
		}
	}

	private static Socket connect(int port) throws IOException {
		Socket socket = new Socket();
		try {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
			socket.setSoTimeout(5000);
			return socket;
		}
		catch (IOException ex) {
			socket.close();
			throw ex;
		}
	}


	/**
	 * Picks client ports whose cluster bus ports (client port + 10000) are free
	 * too: Redis 6.2 cannot move the bus elsewhere.
	 */
	private static List<Integer> freePorts() {
		List<Integer> ports = new ArrayList<>();
		Set<Integer> taken = new HashSet<>();
		for (int probe = 0; probe < 1000 && ports.size() < MASTERS; probe++) {
			int port = ThreadLocalRandom.current().nextInt(MIN_PORT, MAX_PORT);
			int bus = port + BUS_PORT_OFFSET;
			if (!taken.contains(port) && !taken.contains(bus) && isFree(port) && isFree(bus)) {
				ports.add(port);
				taken.add(port);
				taken.add(bus);
			}
		}
		if (ports.size() < MASTERS) {
			throw new IllegalStateException("No free port pairs (P, P+" + BUS_PORT_OFFSET + ") between " + MIN_PORT
					+ " and " + MAX_PORT);
		}
		return ports;
	}

	private static boolean isFree(int port) {
		try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	private record Node(int port, List<String> command, Path log, Process process) {

		static Node start(Path binary, int port, Path directory) {
			String p = Integer.toString(port);
			List<String> command = List.of(binary.toString(), "--port", p, "--bind", "127.0.0.1",
					"--cluster-enabled", "yes", "--cluster-config-file",
					directory.resolve("nodes-" + p + ".conf").toString(), "--cluster-node-timeout", "5000",
					// Nodes announce 127.0.0.1 from the start instead of learning their address from peers.
					"--cluster-announce-ip", "127.0.0.1", "--dir", directory.toString(), "--save", "", "--appendonly",
					"no");
			Path log = directory.resolve("redis-" + p + ".log");
			try {
				Process process = new ProcessBuilder(command).directory(directory.toFile())
					.redirectErrorStream(true)
					.redirectOutput(log.toFile())
					.start();
				return new Node(port, command, log, process);
			}
			catch (IOException ex) {
				throw new IllegalStateException("Cannot run " + command, ex);
			}
		}

		void awaitPing() {
			long deadline = System.nanoTime() + NODE_START_TIMEOUT_NANOS;
			while (System.nanoTime() - deadline < 0) {
				if (!this.process.isAlive()) {
					throw new IllegalStateException(
							"redis-server on port " + this.port + " exited with " + this.process.exitValue());
				}
				try (Socket socket = connect(this.port)) {
					Resp.send(socket.getOutputStream(), "PING");
					if ("+PONG".equals(Resp.readLine(socket.getInputStream()))) {
						return;
					}
				}
				catch (IOException ex) {
					// Not listening yet.
				}
				LockSupport.parkNanos(POLL_PAUSE_NANOS);
			}
			throw new IllegalStateException("redis-server on port " + this.port + " did not answer PING within 10s");
		}

		String logText() {
			try {
				return Files.readString(this.log);
			}
			catch (IOException ex) {
				return "(no log: " + ex + ")";
			}
		}

	}

}
