package dev.ratelimit.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.TimeoutOptions;

import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A real Redis Sentinel deployment for failover tests: a primary, one replica
 * and three sentinels, each a {@code redis-server} process on a free loopback
 * port, the sentinels monitoring the primary as {@value #MASTER_NAME} with a
 * quorum of 2, {@code down-after-milliseconds} 2000 (a primary starved of CPU for
 * a second on a busy test machine is not failed over behind a test's back),
 * {@code failover-timeout} 5000 and {@code parallel-syncs} 1.
 * <p>
 * Only {@code redis-server} is needed (the binary {@link RedisServerFixture}
 * finds; sentinels run as {@code redis-server <conf> --sentinel}). Every
 * process has a config file of its own in a temporary directory, because
 * sentinels rewrite theirs and, on a failover, have the data nodes rewrite
 * theirs ({@code CONFIG REWRITE}) as in production; a restarted process reads
 * it again. {@link #start()} returns once every sentinel knows the primary,
 * the replica and the other two sentinels and the replica is in sync; a
 * deployment that does not form within 20 seconds throws with every process's
 * log: tests fail, they are never skipped.
 * <p>
 * <strong>In sync</strong>, here, means that writes reach the replica, which
 * its {@code master_link_status:up} does not: after a diskless full sync
 * (Redis 7's default) the primary streams nothing to the replica until the
 * replica's first {@code REPLCONF ACK}, up to a second later, and a failover
 * meanwhile loses every write since the sync. The fixture writes and deletes
 * a probe key in one transaction and waits for {@code WAIT} to count the
 * replica; tests that must not lose a write wait for it the same way
 * ({@code WAIT} on the connection that wrote).
 * <p>
 * <strong>Not shared.</strong> Tests kill, freeze and fail over these
 * processes, so each test class (or test) starts its own and closes it; a
 * shutdown hook kills whatever a failed test left running:
 * <pre class="code">
 * private RedisSentinelFixture sentinel;
 *
 * &#64;BeforeEach
 * void start() {
 *     this.sentinel = RedisSentinelFixture.start();
 * }
 *
 * &#64;AfterEach
 * void stop() {
 *     this.sentinel.close();
 * }
 * </pre>
 * <strong>Timing.</strong> By default ({@link Timing#FAST}) the sentinels'
 * internal periods are shortened with {@code SENTINEL DEBUG} (Redis 7+): they
 * read {@code INFO} every 200 ms instead of every 10 s and publish hellos
 * every 250 ms instead of every 2 s. That only changes how fast the deployment
 * settles after a change, not what happens. Measured on Redis 7.0 (2 cores),
 * with Redis's own periods in brackets:
 * <ul>
 * <li>{@link #start()}: 0.5 s (2.5 s);</li>
 * <li>{@link #failover()}: the sentinels report the new primary 0.9 to 1.2 s
 * after {@code SENTINEL FAILOVER} (1.1 s: the promotion is confirmed by an
 * {@code INFO} sent every second during a failover whatever the periods);</li>
 * <li>the old primary stays a writable master until a sentinel demotes it,
 * about 1.2 s after the switch (10 s, the {@code INFO} period). Meanwhile
 * writes, {@code EVALSHA} and {@code FCALL} sent to it succeed there and are
 * lost, from new connections and from clients that were on it, Lettuce's
 * included (it asks a sentinel only when it reconnects). {@code WAIT 1} there
 * answers {@code 0} at its timeout: the replica has left. The sentinel
 * demotes it with {@code REPLICAOF} and {@code CLIENT KILL TYPE normal} in one
 * transaction, so its clients see their connection closed, never
 * {@code -READONLY}; only new connections get {@code -READONLY}. The promoted
 * replica's clients are disconnected the same way. (A plain
 * {@code REPLICAOF} leaves clients connected: they get {@code -READONLY} for
 * writes, for {@code EVALSHA} and {@code FCALL} of a script that writes, and
 * an error for {@code WAIT}.) {@link #failoverAndAwaitReplica()} returns
 * about 1.3 s after the switch (20 s: the sentinels see the new replica's
 * link up at their next {@code INFO});</li>
 * <li>{@link #killPrimary()}: the sentinels report the replica as primary
 * about a second more than {@code down-after-milliseconds} after the
 * {@code SIGKILL}: 1.5 to 2.5 s with 1000 ms (2.3 s);</li>
 * <li>{@link #restart(int)} of a killed old primary: it comes back as an empty
 * master and is made a replica; {@code restart} returns about 2 s later (20
 * s).</li>
 * </ul>
 * {@link Timing#REDIS_DEFAULTS} keeps Redis's periods, for a test about the
 * long window in which a primary to be demoted still takes writes. Redis 6.2
 * (the embedded fallback) has no {@code SENTINEL DEBUG}: there both timings
 * behave as {@link Timing#REDIS_DEFAULTS}, a demotion takes about 20 s, and
 * every wait of this fixture allows for it.
 * <p>
 * Ports identify processes: {@link #serverPorts()} lists the two data nodes
 * (the primary at start first), {@link #sentinelPorts()} the sentinels, and
 * {@link #call}, {@link #kill}, {@link #pause}, {@link #resume} and
 * {@link #restart} take either kind.
 */
public final class RedisSentinelFixture implements AutoCloseable {

	/** The name the sentinels monitor the primary under. */
	public static final String MASTER_NAME = "mymaster";

	/**
	 * How fast the sentinels settle after a change; see the class
	 * documentation.
	 */
	public enum Timing {

		/** Shortened {@code INFO} and hello periods, where Redis allows it (7+). */
		FAST,

		/** Redis's own periods: an old primary is demoted about 10 s after a switch. */
		REDIS_DEFAULTS

	}

	private static final int QUORUM = 2;

	private static final int DOWN_AFTER_MILLIS = 2000;

	/**
	 * Long enough for a promotion on a busy machine (it is confirmed by an INFO
	 * sent once a second), short enough that a failed election is retried
	 * (after twice this) within a test's patience.
	 */
	private static final int FAILOVER_TIMEOUT_MILLIS = 5000;

	/**
	 * {@code SENTINEL DEBUG} settings of {@link Timing#FAST}. A sentinel demotes
	 * a master that should be a replica four publish periods after it first
	 * reports its role, at its next INFO. The tilt period is shortened too: a
	 * sentinel whose timer was late by 2 s (a frozen sentinel, a starved
	 * machine) stops acting for that long, 30 s by default.
	 */
	private static final List<String> FAST_PERIODS = List.of("INFO-PERIOD", "200", "PUBLISH-PERIOD", "250",
			"TILT-PERIOD", "5000");

	private static final Duration FORM_TIMEOUT = Duration.ofSeconds(20);

	/** Enough for every change with Redis's own periods: 20 s with 7.0, 30 s with 6.2. */
	private static final Duration CHANGE_TIMEOUT = Duration.ofSeconds(60);

	private static final int START_ATTEMPTS = 3;

	/** Written and deleted in one transaction to see that writes reach the replica. */
	private static final String PROBE_KEY = "ratelimit-fixture:replication-probe";

	private final Path directory;

	private final Timing timing;

	private final List<RedisProcess> servers = new ArrayList<>();

	private final List<RedisProcess> sentinels = new ArrayList<>();

	private final Thread shutdownHook;

	private boolean closed;

	private RedisSentinelFixture(Path directory, Timing timing) {
		this.directory = directory;
		this.timing = timing;
		this.shutdownHook = new Thread(this::stopProcesses, "redis-sentinel-fixture-stop");
		Runtime.getRuntime().addShutdownHook(this.shutdownHook);
	}

	/**
	 * Starts a new deployment with {@link Timing#FAST} and waits until it is
	 * usable.
	 * @return the running deployment, to be closed by the caller
	 * @throws IllegalStateException if it could not be formed
	 */
	public static RedisSentinelFixture start() {
		return start(Timing.FAST);
	}

	/**
	 * Starts a new deployment and waits until every sentinel knows the primary,
	 * the replica and the other sentinels, and the replica is in sync.
	 * @param timing how fast the sentinels settle after a change
	 * @return the running deployment, to be closed by the caller
	 * @throws IllegalStateException if it could not be formed
	 */
	public static RedisSentinelFixture start(Timing timing) {
		IllegalStateException failure = null;
		// A probed port can be taken by someone else before redis-server binds it: retry.
		for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
			try {
				return start(timing, RedisProcess.freePorts(5, 0));
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

	private static RedisSentinelFixture start(Timing timing, List<Integer> ports) {
		Path directory;
		try {
			directory = Files.createTempDirectory("redis-sentinel-");
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot create a directory for the sentinel deployment", ex);
		}
		RedisSentinelFixture fixture = new RedisSentinelFixture(directory, timing);
		try {
			int primary = ports.get(0);
			fixture.servers.add(fixture.startServer(primary, null));
			RedisProcess replica = fixture.startServer(ports.get(1), primary);
			fixture.servers.add(replica);
			// The sentinels learn the replica from the primary's INFO, asked at once on connecting: a replica
			// linked by then is known without waiting for the next INFO (10 s by default). Writes reach it
			// up to a second later (see the class documentation), while the sentinels find each other.
			fixture.await("replica on port " + replica.port() + " linked", FORM_TIMEOUT, () -> {
				String problem = linkProblem(replica, primary);
				if (problem != null) {
					throw notYet(problem);
				}
				return replica;
			});
			for (int port : ports.subList(2, 5)) {
				fixture.sentinels.add(fixture.startSentinel(port, primary));
			}
			fixture.awaitHealthy("the deployment to form", FORM_TIMEOUT);
			return fixture;
		}
		catch (RuntimeException ex) {
			String logs = fixture.logs();
			fixture.close();
			throw new IllegalStateException("Cannot start a Redis Sentinel deployment on ports " + ports + ": " + ex
					+ "\n" + logs, ex);
		}
	}

	private RedisProcess startServer(int port, Integer primary) {
		Path data = this.directory.resolve("redis-" + port);
		StringBuilder config = new StringBuilder().append("port ").append(port).append('\n')
			.append("bind 127.0.0.1\n")
			.append("dir ").append(data).append('\n')
			.append("save \"\"\n")
			.append("appendonly no\n")
			// Redis 7 waits 5 s for more replicas before a diskless full sync: nobody else is coming.
			.append("repl-diskless-sync-delay 0\n")
			// Never an RDB on disk, that a restart would load: a killed node comes back empty.
			.append("repl-diskless-load swapdb\n");
		if (primary != null) {
			config.append("replicaof 127.0.0.1 ").append(primary).append('\n');
		}
		Path file = writeConfig("redis-" + port + ".conf", config.toString(), data);
		return RedisProcess.start(port, "redis-server", List.of(file.toString()), this.directory,
				this.directory.resolve("redis-" + port + ".log"));
	}

	private RedisProcess startSentinel(int port, int primary) {
		String config = "port " + port + "\n" + "bind 127.0.0.1\n" + "dir " + this.directory + "\n"
				+ "sentinel monitor " + MASTER_NAME + " 127.0.0.1 " + primary + " " + QUORUM + "\n"
				+ "sentinel down-after-milliseconds " + MASTER_NAME + " " + DOWN_AFTER_MILLIS + "\n"
				+ "sentinel failover-timeout " + MASTER_NAME + " " + FAILOVER_TIMEOUT_MILLIS + "\n"
				+ "sentinel parallel-syncs " + MASTER_NAME + " 1\n";
		Path file = writeConfig("sentinel-" + port + ".conf", config, null);
		RedisProcess sentinel = RedisProcess.start(port, "sentinel", List.of(file.toString(), "--sentinel"),
				this.directory, this.directory.resolve("sentinel-" + port + ".log"));
		tune(sentinel);
		return sentinel;
	}

	private Path writeConfig(String name, String config, Path dataDirectory) {
		try {
			if (dataDirectory != null) {
				Files.createDirectories(dataDirectory);
			}
			return Files.writeString(this.directory.resolve(name), config);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot write " + name, ex);
		}
	}

	/**
	 * Applies the timing's periods; they live in the sentinel's memory only, so
	 * a restarted sentinel needs them again.
	 */
	private void tune(RedisProcess sentinel) {
		if (this.timing != Timing.FAST) {
			return;
		}
		List<String> command = new ArrayList<>(List.of("SENTINEL", "DEBUG"));
		command.addAll(FAST_PERIODS);
		String reply = RedisProcess.call(sentinel.port(), command.toArray(String[]::new));
		// Redis 6.2 has no SENTINEL DEBUG and keeps its periods, as the class documentation says.
		if (!reply.equals("+OK") && !reply.toLowerCase(Locale.ROOT).contains("unknown")) {
			throw new IllegalStateException("SENTINEL DEBUG on port " + sentinel.port() + " failed: " + reply);
		}
	}

	/**
	 * Returns the name the sentinels monitor the primary under.
	 * @return {@value #MASTER_NAME}
	 */
	public String masterName() {
		return MASTER_NAME;
	}

	/**
	 * Returns the sentinels' ports, on {@code 127.0.0.1}.
	 * @return the ports
	 */
	public List<Integer> sentinelPorts() {
		return this.sentinels.stream().map(RedisProcess::port).toList();
	}

	/**
	 * Returns the ports of the two data nodes, on {@code 127.0.0.1}: the primary
	 * at start, then the replica at start, whatever their roles now.
	 * @return the ports
	 */
	public List<Integer> serverPorts() {
		return this.servers.stream().map(RedisProcess::port).toList();
	}

	/**
	 * Returns the primary's port as the first running sentinel reports it
	 * ({@code SENTINEL GET-MASTER-ADDR-BY-NAME}): what a client asks.
	 * @return the port
	 */
	public int primaryPort() {
		return reportedPrimary(firstAvailableSentinel());
	}

	/**
	 * Returns the primary's port as one sentinel reports it
	 * ({@code SENTINEL GET-MASTER-ADDR-BY-NAME}).
	 * @param sentinelPort the sentinel's port
	 * @return the port
	 */
	public int primaryPortReportedBy(int sentinelPort) {
		RedisProcess sentinel = process(sentinelPort);
		if (!this.sentinels.contains(sentinel)) {
			throw new IllegalStateException("Port " + sentinelPort + " is not a sentinel of this fixture");
		}
		return reportedPrimary(sentinel);
	}

	/**
	 * Returns the port of the data node that is not {@link #primaryPort()},
	 * whatever its state: it may be dead, frozen, or an old primary not yet
	 * demoted.
	 * @return the port
	 */
	public int replicaPort() {
		int primary = primaryPort();
		return serverPorts().stream()
			.filter((port) -> port != primary)
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("The sentinels report an unknown primary: " + primary));
	}

	/**
	 * Sends {@code SENTINEL FAILOVER} to a sentinel and returns once every
	 * running sentinel reports the replica as the new primary and it is a
	 * master. The old primary is still a writable master then, for about a
	 * second (ten with {@link Timing#REDIS_DEFAULTS}), until a sentinel demotes
	 * it; see {@link #failoverAndAwaitReplica()}. While the sentinels do not
	 * yet count the replica as fit (just after a start, a restart or another
	 * failover) they answer {@code -NOGOODSLAVE}, and the request is repeated.
	 * @return the new primary's port
	 * @throws IllegalStateException if the failover is refused or does not
	 * complete within 60 s
	 */
	public int failover() {
		int old = primaryPort();
		boolean replicaRunning = this.servers.stream()
			.anyMatch((server) -> server.port() != old && server.isAvailable());
		if (!replicaRunning) {
			throw new IllegalStateException("No running replica to fail over to from port " + old);
		}
		RedisProcess sentinel = firstAvailableSentinel();
		await("SENTINEL FAILOVER accepted by port " + sentinel.port(), CHANGE_TIMEOUT, () -> {
			String reply = RedisProcess.call(sentinel.port(), "SENTINEL", "FAILOVER", MASTER_NAME);
			if (reply.startsWith("-NOGOODSLAVE")) {
				throw notYet(reply);
			}
			if (!reply.equals("+OK")) {
				throw new IllegalStateException("SENTINEL FAILOVER on port " + sentinel.port() + " failed: " + reply
						+ "\n" + logs());
			}
			return reply;
		});
		return awaitSwitch(old, CHANGE_TIMEOUT);
	}

	/**
	 * Fails over as {@link #failover()} does, then waits until the old primary
	 * has been demoted, is in sync with the new one, and every sentinel counts
	 * it as a fit replica, so that another failover can follow.
	 * @return the new primary's port
	 * @throws IllegalStateException if that does not happen within 60 s each
	 */
	public int failoverAndAwaitReplica() {
		int old = primaryPort();
		int primary = failover();
		awaitReplica(old, CHANGE_TIMEOUT);
		return primary;
	}

	/**
	 * Waits until every running sentinel reports a primary other than
	 * {@code oldPort}, all the same one, and that node says it is a master.
	 * @param oldPort the primary's port before the switch
	 * @param timeout how long to wait
	 * @return the new primary's port
	 * @throws IllegalStateException if that does not happen in time
	 */
	public int awaitSwitch(int oldPort, Duration timeout) {
		return await("a switch away from port " + oldPort, timeout, () -> {
			int agreed = agreedPrimary();
			if (agreed == oldPort) {
				throw notYet("the sentinels still report port " + oldPort);
			}
			String role = RedisProcess.info(server(agreed).port(), "replication", "role");
			if (!"master".equals(role)) {
				throw notYet("port " + agreed + " reported as primary has role " + role);
			}
			return agreed;
		});
	}

	/**
	 * Waits until the data node on {@code port} is a replica of the primary the
	 * sentinels report, in sync (writes reach it), and every running sentinel
	 * lists it as a fit replica (no down flag, link ok).
	 * @param port the data node's port
	 * @param timeout how long to wait
	 * @throws IllegalStateException if that does not happen in time
	 */
	public void awaitReplica(int port, Duration timeout) {
		RedisProcess server = server(port);
		await("port " + port + " a replica in sync", timeout, () -> {
			int primary = agreedPrimary();
			String problem = replicaProblem(server, primary);
			if (problem == null) {
				for (RedisProcess sentinel : availableSentinels()) {
					problem = sentinelReplicaProblem(sentinel, server, primary);
					if (problem != null) {
						break;
					}
				}
			}
			if (problem != null) {
				throw notYet(problem);
			}
			return port;
		});
	}

	/**
	 * Kills the current primary with {@code SIGKILL} and waits for the process
	 * to end. The sentinels notice after {@code down-after-milliseconds} and
	 * promote the replica: see {@link #awaitSwitch(int, Duration)}.
	 * @return the killed primary's port
	 */
	public int killPrimary() {
		int port = primaryPort();
		kill(port);
		return port;
	}

	/**
	 * Kills a data node or a sentinel with {@code SIGKILL} and waits for the
	 * process to end.
	 * @param port the process's port
	 */
	public void kill(int port) {
		process(port).kill();
	}

	/**
	 * Starts a killed data node or sentinel again with its original command
	 * line and config file (as rewritten since), then waits until the
	 * deployment is whole again: every running sentinel agrees on the primary
	 * and knows the running replicas and sentinels, and every running data node
	 * other than the primary is its replica, in sync. A killed old primary thus
	 * comes back as an empty master and returns once the sentinels have made it
	 * a replica. Restart a killed primary only after the switch
	 * ({@link #awaitSwitch}): one restarted before the sentinels noticed is
	 * still their primary, and its replica copies its empty data set.
	 * @param port the process's port
	 * @throws IllegalStateException if the process is running, or the
	 * deployment is not whole again within 60 s
	 */
	public void restart(int port) {
		RedisProcess process = process(port);
		process.restart(this.directory);
		if (this.sentinels.contains(process)) {
			tune(process);
		}
		awaitHealthy("the deployment whole again after restarting port " + port, CHANGE_TIMEOUT);
	}

	/**
	 * Freezes a data node or a sentinel with {@code SIGSTOP}: its connections
	 * stay open but nothing is answered. A primary frozen for longer than
	 * {@code down-after-milliseconds} is failed over. This fixture's own
	 * queries skip frozen processes.
	 * @param port the process's port
	 */
	public void pause(int port) {
		process(port).pause();
	}

	/**
	 * Thaws a process frozen by {@link #pause(int)} with {@code SIGCONT}.
	 * @param port the process's port
	 */
	public void resume(int port) {
		process(port).resume();
	}

	/**
	 * Sends one command to a data node or a sentinel on a fresh connection and
	 * returns the first line of the reply: enough for status, error and integer
	 * replies.
	 * @param port the process's port
	 * @param arguments the command and its arguments
	 * @return the first reply line, such as {@code +OK}, {@code :1} or {@code -READONLY ...}
	 */
	public String call(int port, String... arguments) {
		return RedisProcess.call(port, arguments);
	}

	/**
	 * Sends one command to a data node or a sentinel on a fresh connection and
	 * returns its whole reply as text, for the commands that answer a status or
	 * a bulk string: {@code INFO}, {@code GET}.
	 * @param port the process's port
	 * @param arguments the command and its arguments
	 * @return the reply, or {@code null} for nil
	 * @throws IllegalStateException if the process answers with an error
	 */
	public String query(int port, String... arguments) {
		Object reply = RedisProcess.query(port, arguments);
		return (reply != null) ? reply.toString() : null;
	}

	/**
	 * Removes every key from the primary (and so from its replica).
	 */
	public void flushAll() {
		int primary = primaryPort();
		String reply = call(primary, "FLUSHALL");
		if (!reply.equals("+OK")) {
			throw new IllegalStateException("FLUSHALL on port " + primary + " failed: " + reply);
		}
	}

	/**
	 * Creates the connection factory production uses for this deployment: the
	 * limiter's own over a {@link RedisSentinelConfiguration} of the three
	 * sentinels, connected, with its function library loaded on the primary
	 * (the replica gets it by replication), so that the scripts run as
	 * {@code FCALL}. The caller destroys it.
	 * @return the connection factory
	 */
	public LettuceConnectionFactory newConnectionFactory() {
		return LimiterFactories.withFunctions(new LettuceConnectionFactory(sentinelConfiguration()));
	}

	/**
	 * Creates a started, plain Lettuce connection factory over a
	 * {@link RedisSentinelConfiguration} of the three sentinels, on which the
	 * limiter sends its scripts as {@code EVALSHA}. Lettuce asks a sentinel for
	 * the primary whenever it (re)connects. The caller destroys it.
	 * @return the connection factory
	 */
	public LettuceConnectionFactory newEvalShaConnectionFactory() {
		ClientOptions options = ClientOptions.builder().timeoutOptions(TimeoutOptions.enabled()).build();
		LettuceClientConfiguration client = LettuceClientConfiguration.builder()
			.clientOptions(options)
			.commandTimeout(Duration.ofSeconds(5))
			.build();
		LettuceConnectionFactory factory = new LettuceConnectionFactory(sentinelConfiguration(), client);
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	private RedisSentinelConfiguration sentinelConfiguration() {
		RedisSentinelConfiguration configuration = new RedisSentinelConfiguration().master(MASTER_NAME);
		for (int port : sentinelPorts()) {
			configuration.sentinel("127.0.0.1", port);
		}
		return configuration;
	}

	/**
	 * Kills every process at once, waits for them to end and deletes their
	 * files. Calling it again does nothing.
	 */
	@Override
	public synchronized void close() {
		if (this.closed) {
			return;
		}
		this.closed = true;
		stopProcesses();
		RedisProcess.deleteDirectory(this.directory);
		try {
			Runtime.getRuntime().removeShutdownHook(this.shutdownHook);
		}
		catch (IllegalStateException ex) {
			// The JVM is shutting down: the hook runs or has run, and finds nothing left.
		}
	}

	private void stopProcesses() {
		List<RedisProcess> all = new ArrayList<>(this.sentinels);
		all.addAll(this.servers);
		// Sentinels first, so that none reacts to a dying primary on the way out.
		for (RedisProcess process : all) {
			process.kill();
		}
	}

	/**
	 * Waits until the deployment is whole: see {@link #restart(int)}.
	 */
	private void awaitHealthy(String what, Duration timeout) {
		await(what, timeout, () -> {
			int primary = agreedPrimary();
			String role = RedisProcess.info(server(primary).port(), "replication", "role");
			if (!"master".equals(role)) {
				throw notYet("primary port " + primary + " has role " + role);
			}
			List<RedisProcess> sentinels = availableSentinels();
			for (RedisProcess sentinel : sentinels) {
				Map<String, String> master = fields(
						RedisProcess.query(sentinel.port(), "SENTINEL", "MASTER", MASTER_NAME));
				if (!"master".equals(master.get("flags"))) {
					throw notYet("sentinel " + sentinel.port() + " flags the primary " + master.get("flags"));
				}
				List<Integer> known = new ArrayList<>();
				List<Map<String, String>> others = list(
						RedisProcess.query(sentinel.port(), "SENTINEL", "SENTINELS", MASTER_NAME));
				for (Map<String, String> other : others) {
					// Not master_down: that is a stale vote from the last failover, kept for five ask periods (5 s).
					List<String> flags = List.of(other.get("flags").split(","));
					if (flags.contains("sentinel") && !flags.contains("s_down") && !flags.contains("disconnected")) {
						known.add(Integer.parseInt(other.get("port")));
					}
				}
				for (RedisProcess other : sentinels) {
					if (other != sentinel && !known.contains(other.port())) {
						throw notYet("sentinel " + sentinel.port() + " does not know sentinel " + other.port()
								+ " as a sentinel in good standing: " + others);
					}
				}
			}
			for (RedisProcess server : this.servers) {
				if (server.port() == primary || !server.isAvailable()) {
					continue;
				}
				String problem = replicaProblem(server, primary);
				for (int i = 0; problem == null && i < sentinels.size(); i++) {
					problem = sentinelReplicaProblem(sentinels.get(i), server, primary);
				}
				if (problem != null) {
					throw notYet(problem);
				}
			}
			return primary;
		});
	}

	/**
	 * Returns what keeps the node from being an in-sync replica of
	 * {@code primary}, or {@code null}: by its own account, and with writes to
	 * the primary reaching it.
	 */
	private static String replicaProblem(RedisProcess server, int primary) {
		String problem = linkProblem(server, primary);
		// One replica at most: a write the primary's replicas acknowledge reached this one.
		if (problem == null && !RedisProcess.streamsTo(primary, 1, PROBE_KEY)) {
			problem = "writes to " + primary + " do not reach replica " + server.port() + " yet";
		}
		return problem;
	}

	/**
	 * Returns what keeps the node from being a replica of {@code primary} with
	 * its link up, by its own account, or {@code null}.
	 */
	private static String linkProblem(RedisProcess server, int primary) {
		Map<String, String> replication = infoFields(server.port(), "replication");
		if (!"slave".equals(replication.get("role"))
				|| !Integer.toString(primary).equals(replication.get("master_port"))
				|| !"up".equals(replication.get("master_link_status"))) {
			return "port " + server.port() + " is not an in-sync replica of " + primary + ": role "
					+ replication.get("role") + ", master_port " + replication.get("master_port")
					+ ", master_link_status " + replication.get("master_link_status");
		}
		return null;
	}

	/**
	 * Returns what keeps the sentinel from counting the node as a fit replica of
	 * {@code primary}, or {@code null}.
	 */
	private String sentinelReplicaProblem(RedisProcess sentinel, RedisProcess server, int primary) {
		for (Map<String, String> replica : list(
				RedisProcess.query(sentinel.port(), "SENTINEL", "REPLICAS", MASTER_NAME))) {
			if (Integer.toString(server.port()).equals(replica.get("port"))) {
				if ("slave".equals(replica.get("flags")) && "ok".equals(replica.get("master-link-status"))
						&& Integer.toString(primary).equals(replica.get("master-port"))) {
					return null;
				}
				return "sentinel " + sentinel.port() + " sees replica " + server.port() + " as " + replica;
			}
		}
		return "sentinel " + sentinel.port() + " does not know replica " + server.port();
	}

	/**
	 * Returns the primary every running sentinel reports, if they agree.
	 */
	private int agreedPrimary() {
		Integer agreed = null;
		for (RedisProcess sentinel : availableSentinels()) {
			int reported = reportedPrimary(sentinel);
			if (agreed != null && agreed != reported) {
				throw notYet("sentinels disagree on the primary: " + agreed + " and " + reported);
			}
			agreed = reported;
		}
		if (agreed == null) {
			throw new IllegalStateException("No sentinel is running");
		}
		return agreed;
	}

	private static int reportedPrimary(RedisProcess sentinel) {
		List<?> address = (List<?>) RedisProcess.query(sentinel.port(), "SENTINEL", "GET-MASTER-ADDR-BY-NAME",
				MASTER_NAME);
		return Integer.parseInt((String) address.get(1));
	}

	private List<RedisProcess> availableSentinels() {
		return this.sentinels.stream().filter(RedisProcess::isAvailable).toList();
	}

	private RedisProcess firstAvailableSentinel() {
		return availableSentinels().stream()
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("No sentinel is running"));
	}

	private RedisProcess server(int port) {
		return this.servers.stream()
			.filter((server) -> server.port() == port)
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("No data node of this fixture on port " + port + " (they are "
					+ serverPorts() + ")"));
	}

	private RedisProcess process(int port) {
		List<RedisProcess> all = new ArrayList<>(this.servers);
		all.addAll(this.sentinels);
		return all.stream()
			.filter((process) -> process.port() == port)
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("No process of this fixture on port " + port));
	}

	private static Map<String, String> infoFields(int port, String section) {
		Map<String, String> fields = new HashMap<>();
		((String) RedisProcess.query(port, "INFO", section)).lines().forEach((line) -> {
			int colon = line.indexOf(':');
			if (colon > 0) {
				fields.put(line.substring(0, colon), line.substring(colon + 1).strip());
			}
		});
		return fields;
	}

	/** Sentinel answers describe an instance as a flat array of names and values. */
	private static Map<String, String> fields(Object reply) {
		List<?> flat = (List<?>) reply;
		Map<String, String> fields = new HashMap<>();
		for (int i = 0; i + 1 < flat.size(); i += 2) {
			fields.put((String) flat.get(i), (String) flat.get(i + 1));
		}
		return fields;
	}

	private static List<Map<String, String>> list(Object reply) {
		return ((List<?>) reply).stream().map(RedisSentinelFixture::fields).toList();
	}

	private <T> T await(String what, Duration timeout, Supplier<T> attempt) {
		return RedisProcess.await(what, timeout, attempt, this::logs);
	}

	private static RedisProcess.NotYet notYet(String problem) {
		return new RedisProcess.NotYet(problem);
	}

	/**
	 * Returns every process's log, for a failed test to show what the
	 * deployment did.
	 * @return the logs, each headed by its process
	 */
	public String logs() {
		StringBuilder logs = new StringBuilder();
		for (RedisProcess process : this.servers) {
			logs.append(process.describedLog());
		}
		for (RedisProcess process : this.sentinels) {
			logs.append(process.describedLog());
		}
		return logs.toString();
	}

}
