package dev.ratelimit.support;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
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
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * One {@code redis-server} process of a multi-process fixture (a data node,
 * a sentinel or a cluster node) on a fixed loopback port: started, frozen,
 * thawed, killed and started again with the same command line, its output
 * kept in a log file that the fixture's exceptions quote.
 * <p>
 * Also what those fixtures share: raw commands on a fresh connection, the
 * choice of ports, and polling processes until they reach a state.
 */
final class RedisProcess {

	/**
	 * Runs the server in a session of its own where {@code setsid} exists, for
	 * the reason {@link RedisServerFixture} gives: a server in the test JVM's
	 * session shares its CPU share, and a busy test would starve it. Sentinels
	 * and cluster nodes starved for a second start failovers nobody asked for.
	 */
	private static final List<String> OWN_SESSION = Files.isExecutable(Path.of("/usr/bin/setsid"))
			? List.of("/usr/bin/setsid") : List.of();

	/**
	 * Ports are drawn from here, below the usual ephemeral range (32768+) even
	 * with the cluster bus offset: a sentinel or node reconnecting to a killed
	 * process's port could otherwise be given that very port as its own source
	 * port (a TCP self-connect) and keep the restarted process from binding it.
	 */
	private static final int MIN_PORT = 12000;

	private static final int MAX_PORT = 22000;

	private static final long POLL_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

	private static final long START_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);

	private final int port;

	private final String role;

	private final List<String> command;

	private final Path log;

	private volatile Process process;

	private volatile boolean paused;

	private RedisProcess(int port, String role, List<String> command, Path log) {
		this.port = port;
		this.role = role;
		this.command = command;
		this.log = log;
	}

	/**
	 * Starts {@code redis-server} with the given arguments, its output appended
	 * to {@code log}, and waits until it answers {@code PING}.
	 * @param port the port the arguments make it listen on
	 * @param role what the process is, for messages ("primary", "sentinel", ...)
	 * @param arguments the arguments after the binary
	 * @param directory the working directory
	 * @param log the log file
	 * @return the running process
	 * @throws IllegalStateException if it exits or does not answer within 10s
	 */
	static RedisProcess start(int port, String role, List<String> arguments, Path directory, Path log) {
		List<String> command = new ArrayList<>(OWN_SESSION);
		command.add(RedisServerFixture.binary().toString());
		command.addAll(arguments);
		RedisProcess started = new RedisProcess(port, role, List.copyOf(command), log);
		started.launch(directory);
		return started;
	}

	int port() {
		return this.port;
	}

	String role() {
		return this.role;
	}

	List<String> command() {
		return this.command;
	}

	boolean isAlive() {
		return this.process.isAlive();
	}

	boolean isPaused() {
		return this.paused;
	}

	/** Alive and not frozen: a process whose answers can be waited for. */
	boolean isAvailable() {
		return this.process.isAlive() && !this.paused;
	}

	/**
	 * Starts the process again with its original command line, in its original
	 * directory, and waits until it answers {@code PING}.
	 * @param directory the working directory
	 * @throws IllegalStateException if it is still running, exits or does not answer
	 */
	synchronized void restart(Path directory) {
		if (this.process.isAlive()) {
			throw new IllegalStateException(this.role + " on port " + this.port + " is still running");
		}
		launch(directory);
	}

	private void launch(Path directory) {
		try {
			this.process = new ProcessBuilder(this.command).directory(directory.toFile())
				.redirectErrorStream(true)
				.redirectOutput(ProcessBuilder.Redirect.appendTo(this.log.toFile()))
				.start();
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot run " + this.command, ex);
		}
		this.paused = false;
		awaitPing();
	}

	private void awaitPing() {
		long deadline = System.nanoTime() + START_TIMEOUT_NANOS;
		IOException lastFailure = null;
		while (System.nanoTime() - deadline < 0) {
			if (!this.process.isAlive()) {
				throw new IllegalStateException(this.role + " on port " + this.port + " exited with "
						+ this.process.exitValue() + ": " + this.command + "\n" + logText());
			}
			try {
				if ("PONG".equals(query(this.port, "PING"))) {
					return;
				}
			}
			catch (UncheckedIOException ex) {
				lastFailure = ex.getCause();
			}
			// Polling a starting process: the only place a short pause is needed.
			LockSupport.parkNanos(POLL_PAUSE_NANOS);
		}
		kill();
		throw new IllegalStateException(this.role + " on port " + this.port + " did not answer PING within 10s: "
				+ this.command + "\n" + logText(), lastFailure);
	}

	/**
	 * Kills the process with {@code SIGKILL}, as a crash would, and waits for it
	 * to end. Killing a dead process does nothing.
	 */
	void kill() {
		this.process.destroyForcibly();
		try {
			if (!this.process.waitFor(10, TimeUnit.SECONDS)) {
				throw new IllegalStateException(this.role + " on port " + this.port + " survived SIGKILL for 10s");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while killing " + this.role + " on port " + this.port, ex);
		}
	}

	/**
	 * Freezes the process with {@code SIGSTOP}: its connections stay open but
	 * nothing is answered, as with a stalled host.
	 */
	void pause() {
		signal("STOP");
		this.paused = true;
	}

	/**
	 * Thaws a process frozen by {@link #pause()} with {@code SIGCONT}.
	 */
	void resume() {
		signal("CONT");
		this.paused = false;
	}

	private void signal(String signal) {
		if (!this.process.isAlive()) {
			throw new IllegalStateException(this.role + " on port " + this.port + " is not running");
		}
		try {
			Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(this.process.pid())).inheritIO()
				.start();
			if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
				throw new IllegalStateException("kill -" + signal + " " + this.process.pid() + " failed");
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot send SIG" + signal + " to " + this.role, ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while signalling " + this.role, ex);
		}
	}

	String logText() {
		try {
			return Files.readString(this.log);
		}
		catch (IOException ex) {
			return "(no log: " + ex + ")";
		}
	}

	/**
	 * Returns the log of the process under a heading naming it, for exceptions.
	 */
	String describedLog() {
		return "--- " + this.role + " on port " + this.port + " (" + (this.process.isAlive() ? "running" : "dead")
				+ (this.paused ? ", paused" : "") + "): " + this.command + "\n" + logText() + "\n";
	}

	/**
	 * Sends one command on a fresh connection and returns the first line of the
	 * reply: enough for status, error and integer replies.
	 */
	static String call(int port, String... arguments) {
		try (Socket socket = connect(port)) {
			Resp.send(socket.getOutputStream(), arguments);
			return Resp.readLine(socket.getInputStream());
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Redis on port " + port + " did not answer " + arguments[0], ex);
		}
	}

	/**
	 * Sends one command on a fresh connection and returns the whole reply as
	 * {@link Resp#read} gives it.
	 * @throws IllegalStateException on an error reply
	 */
	static Object query(int port, String... arguments) {
		Object reply;
		try (Socket socket = connect(port)) {
			Resp.send(socket.getOutputStream(), arguments);
			reply = Resp.read(new BufferedInputStream(socket.getInputStream()));
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Redis on port " + port + " did not answer " + arguments[0], ex);
		}
		if (reply instanceof Resp.Error error) {
			throw new IllegalStateException(String.join(" ", arguments) + " on port " + port + " failed: "
					+ error.message());
		}
		return reply;
	}

	/**
	 * Returns whether a master's replication stream reaches at least
	 * {@code replicas} replicas now: a write nobody can see (a {@code SET} and a
	 * {@code DEL} of {@code probeKey} in one transaction), then {@code WAIT} on
	 * the same connection. A replica's {@code master_link_status:up} is not
	 * enough: after a diskless full sync (Redis 7's default), the master sends
	 * the replica nothing until its first {@code REPLCONF ACK}, up to a second
	 * later, and a failover meanwhile loses every write since the sync.
	 * @param masterPort the master's port
	 * @param replicas how many replicas must acknowledge the write
	 * @param probeKey a key the master serves and nobody uses
	 * @return whether they did within 100 ms
	 */
	static boolean streamsTo(int masterPort, int replicas, String probeKey) {
		try (Socket socket = connect(masterPort)) {
			InputStream in = new BufferedInputStream(socket.getInputStream());
			OutputStream out = socket.getOutputStream();
			List<List<String>> commands = List.of(List.of("MULTI"), List.of("SET", probeKey, "1"),
					List.of("DEL", probeKey), List.of("EXEC"), List.of("WAIT", Integer.toString(replicas), "100"));
			Object reply = null;
			for (List<String> command : commands) {
				Resp.send(out, command.toArray(String[]::new));
				reply = Resp.read(in);
			}
			return reply instanceof Long acknowledged && acknowledged >= replicas;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Redis on port " + masterPort + " did not answer WAIT", ex);
		}
	}

	/**
	 * Returns one field of an {@code INFO} section, such as {@code role} of
	 * {@code replication}, or {@code null} if the section lacks it.
	 */
	static String info(int port, String section, String field) {
		String prefix = field + ":";
		return ((String) query(port, "INFO", section)).lines()
			.filter((line) -> line.startsWith(prefix))
			.map((line) -> line.substring(prefix.length()).strip())
			.findFirst()
			.orElse(null);
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
	 * Picks distinct free ports below the ephemeral range; with a bus offset,
	 * only ports whose bus port (port + offset) is free too.
	 * @param count how many
	 * @param busOffset the cluster bus offset, or 0 for none
	 * @return the ports
	 */
	static List<Integer> freePorts(int count, int busOffset) {
		List<Integer> ports = new ArrayList<>();
		Set<Integer> taken = new HashSet<>();
		for (int probe = 0; probe < 1000 && ports.size() < count; probe++) {
			int port = ThreadLocalRandom.current().nextInt(MIN_PORT, MAX_PORT);
			int bus = port + busOffset;
			if (!taken.contains(port) && !taken.contains(bus) && isFree(port) && (busOffset == 0 || isFree(bus))) {
				ports.add(port);
				taken.add(port);
				taken.add(bus);
			}
		}
		if (ports.size() < count) {
			throw new IllegalStateException("No " + count + " free ports between " + MIN_PORT + " and " + MAX_PORT);
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

	/**
	 * Polls {@code attempt} until it returns, while it throws {@link NotYet} or
	 * a process does not answer (it may be restarting or changing role); other
	 * exceptions end the wait at once.
	 * @param what what is awaited, for the exception
	 * @param timeout how long to poll
	 * @param attempt one check, returning the result or throwing {@link NotYet}
	 * @param logs the logs of the fixture's processes, for the exception
	 * @return what {@code attempt} returned
	 * @throws IllegalStateException if {@code attempt} did not return in time
	 */
	static <T> T await(String what, Duration timeout, Supplier<T> attempt, Supplier<String> logs) {
		long deadline = System.nanoTime() + timeout.toNanos();
		String lastProblem = "not checked yet";
		while (true) {
			try {
				return attempt.get();
			}
			catch (NotYet ex) {
				lastProblem = ex.getMessage();
			}
			catch (UncheckedIOException ex) {
				lastProblem = ex.getMessage() + ": " + ex.getCause();
			}
			if (System.nanoTime() - deadline >= 0) {
				throw new IllegalStateException("Waited " + timeout.toMillis() + " ms in vain for " + what
						+ "; last problem: " + lastProblem + "\n" + logs.get());
			}
			// Polling processes that are changing: the only place a short pause is needed.
			LockSupport.parkNanos(POLL_PAUSE_NANOS);
		}
	}

	/**
	 * Deletes a fixture's directory; best effort, a leftover temporary
	 * directory does not fail a test.
	 */
	static void deleteDirectory(Path directory) {
		if (!Files.exists(directory)) {
			return;
		}
		try (Stream<Path> files = Files.walk(directory)) {
			for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
				Files.deleteIfExists(file);
			}
		}
		catch (IOException ex) {
			// Best effort, as the Javadoc says.
		}
	}

	/**
	 * What an {@link #await} is still waiting for; thrown out of a fixture's
	 * method, a state that method cannot read yet.
	 */
	static final class NotYet extends IllegalStateException {

		NotYet(String problem) {
			super(problem);
		}

	}

}
