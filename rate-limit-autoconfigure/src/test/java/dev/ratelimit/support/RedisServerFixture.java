package dev.ratelimit.support;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.test.context.DynamicPropertyRegistry;

import dev.ratelimit.redis.RedisLimiterConnection;

/**
 * A real {@code redis-server} process on a free local port, for tests that need
 * the real thing rather than a mock.
 * <p>
 * The binary is the {@code redis-server} on the {@code PATH} (or the one named
 * by the {@code ratelimit.test.redis-server} system property), else the Linux
 * or macOS build shipped inside the test-scoped
 * {@code com.github.codemonstur:embedded-redis} jar. A server that cannot start
 * throws: tests fail, they are never skipped.
 * <p>
 * Test classes share one server per JVM, stopped by a shutdown hook, and clear
 * it before each test:
 * <pre class="code">
 * private static final RedisServerFixture redis = RedisServerFixture.shared();
 *
 * &#64;BeforeEach
 * void flush() {
 *     redis.flushAll();
 * }
 * </pre>
 * Connections come from {@link #newConnectionFactory()} (the limiter's own,
 * scripts as {@code FCALL}) or {@link #newEvalShaConnectionFactory()} (plain
 * Lettuce, scripts as {@code EVALSHA}); the caller destroys them. A test that needs a server of its own (to kill or pause it) uses
 * {@link #start()} and {@link #close()}.
 */
public final class RedisServerFixture implements AutoCloseable {

	/** System property naming a {@code redis-server} binary to use instead of the search. */
	public static final String BINARY_PROPERTY = "ratelimit.test.redis-server";

	private static final long START_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);

	private static final int START_ATTEMPTS = 3;

	private static RedisServerFixture shared;

	/**
	 * Runs the server in a session of its own where {@code setsid} exists (Linux):
	 * it then replaces itself with the server, so the process is the server's.
	 * Linux schedules a session's processes as one group (autogroup), so a server
	 * started as this JVM's child would share the test's share of the CPU, and
	 * busy threads of a test would starve it as they never starve a Redis on a
	 * host of its own.
	 */
	private static final List<String> OWN_SESSION = Files.isExecutable(Path.of("/usr/bin/setsid"))
			? List.of("/usr/bin/setsid") : List.of();

	private static Path serverBinary;

	private final List<String> command;

	private final int port;

	private final Path log;

	private volatile Process process;

	private RedisServerFixture(List<String> command, int port, Path log, Process process) {
		this.command = command;
		this.port = port;
		this.log = log;
		this.process = process;
	}

	/**
	 * Returns the server shared by every test class of this JVM, starting it on
	 * first use.
	 * @return the shared server
	 */
	public static synchronized RedisServerFixture shared() {
		if (shared == null || !shared.process.isAlive()) {
			RedisServerFixture started = start();
			Runtime.getRuntime().addShutdownHook(new Thread(started::close, "redis-server-fixture-stop"));
			shared = started;
		}
		return shared;
	}

	/**
	 * Starts a new server on a free port and waits until it answers {@code PING}.
	 * @return the running server, to be closed by the caller
	 * @throws IllegalStateException if no server could be started
	 */
	public static RedisServerFixture start() {
		Path binary = binary();
		IllegalStateException failure = null;
		// A free port can be taken by someone else between the probe and the bind: retry.
		for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
			try {
				return start(binary, freePort());
			}
			catch (IllegalStateException ex) {
				failure = ex;
			}
		}
		throw failure;
	}

	private static RedisServerFixture start(Path binary, int port) {
		List<String> command = new ArrayList<>(OWN_SESSION);
		command.addAll(List.of(binary.toString(), "--port", Integer.toString(port), "--bind", "127.0.0.1", "--save",
				"", "--appendonly", "no", "--dir", dataDirectory(port).toString()));
		try {
			Path log = Files.createTempFile("redis-server-" + port + "-", ".log");
			log.toFile().deleteOnExit();
			Process process = new ProcessBuilder(command).redirectErrorStream(true)
				.redirectOutput(log.toFile())
				.start();
			RedisServerFixture server = new RedisServerFixture(command, port, log, process);
			server.awaitPing();
			return server;
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot run " + command, ex);
		}
	}

	/**
	 * A directory of the server's own, never the working directory: a replica's
	 * full sync writes the primary's snapshot ({@code dump.rdb}) to it, even
	 * with saving off, and two servers must never share one.
	 */
	private static Path dataDirectory(int port) {
		try {
			Path directory = Files.createTempDirectory("redis-" + port + "-");
			// Deleted in the reverse order of these calls: the snapshot first, then its (then empty) directory.
			directory.toFile().deleteOnExit();
			directory.resolve("dump.rdb").toFile().deleteOnExit();
			return directory;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot make a directory for redis-server", ex);
		}
	}

	/**
	 * Returns the port the server listens on, on {@code 127.0.0.1}.
	 * @return the port
	 */
	public int port() {
		return this.port;
	}

	/**
	 * Points an application's Redis connection at this server: the one
	 * {@code @DynamicPropertySource} body of the tests.
	 * @param registry the test's dynamic properties
	 */
	public void register(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", this::port);
	}

	/**
	 * Returns the server process, for tests that kill, pause or resume it.
	 * @return the process
	 */
	public Process process() {
		return this.process;
	}

	/**
	 * Returns the command line that started the server, to start it again.
	 * @return the command and its arguments
	 */
	public List<String> command() {
		return this.command;
	}

	/**
	 * Creates the connection factory production uses for this server: the
	 * limiter's own, connected, with its function library loaded, so that the
	 * scripts run as {@code FCALL}. The caller destroys it.
	 * @return the connection factory
	 */
	public LettuceConnectionFactory newConnectionFactory() {
		return newConnectionFactory(RedisLimiterConnection.Coalescing.ON);
	}

	/**
	 * Creates the limiter's own connection factory for this server, as
	 * {@link #newConnectionFactory()} does, its decisions coalesced or each a
	 * call of its own. The caller destroys it.
	 * @param coalescing whether decisions waiting at the same moment go as one call
	 * @return the connection factory
	 */
	public LettuceConnectionFactory newConnectionFactory(RedisLimiterConnection.Coalescing coalescing) {
		return LimiterFactories.withFunctions(
				new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", this.port)), coalescing);
	}

	/**
	 * Creates a started, plain Lettuce connection factory for this server, on
	 * which the limiter sends its scripts as {@code EVALSHA}, as it does where
	 * Redis refuses functions. The caller destroys it.
	 * @return the connection factory
	 */
	public LettuceConnectionFactory newEvalShaConnectionFactory() {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", this.port));
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	/**
	 * Removes every key from the server.
	 */
	public void flushAll() {
		String reply = call("FLUSHALL");
		if (!reply.equals("+OK")) {
			throw new IllegalStateException("FLUSHALL failed: " + reply);
		}
	}

	/**
	 * Sends one command on a fresh connection and returns the first line of the
	 * reply: enough for status, error and integer replies.
	 * @param arguments the command and its arguments
	 * @return the first reply line, such as {@code +OK}, {@code :1} or {@code -ERR ...}
	 */
	public String call(String... arguments) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", this.port), 1000);
			socket.setSoTimeout(5000);
			Resp.send(socket.getOutputStream(), arguments);
			return Resp.readLine(socket.getInputStream());
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Redis on port " + this.port + " did not answer " + arguments[0], ex);
		}
	}

	/**
	 * Kills the server with {@code SIGKILL}, as a crash would, and waits for it to
	 * end. Its data is lost; {@link #restart()} brings up an empty server on the
	 * same port.
	 */
	public void kill() {
		close();
	}

	/**
	 * Freezes the server with {@code SIGSTOP}: connections stay open but nothing
	 * is answered, as with a stalled host or a long GC-like pause.
	 */
	public void pause() {
		signal("STOP");
	}

	/**
	 * Thaws a server frozen by {@link #pause()} with {@code SIGCONT}.
	 */
	public void resume() {
		signal("CONT");
	}

	/**
	 * Starts the server again on the same port after {@link #kill()}, empty, and
	 * waits until it answers.
	 */
	public synchronized void restart() {
		if (this.process.isAlive()) {
			throw new IllegalStateException("redis-server on port " + this.port + " is still running");
		}
		try {
			this.process = new ProcessBuilder(this.command).redirectErrorStream(true)
				.redirectOutput(ProcessBuilder.Redirect.appendTo(this.log.toFile()))
				.start();
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot run " + this.command, ex);
		}
		awaitPing();
	}

	private void signal(String signal) {
		try {
			Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(this.process.pid())).inheritIO()
				.start();
			if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
				throw new IllegalStateException("kill -" + signal + " " + this.process.pid() + " failed");
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot send SIG" + signal + " to redis-server", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while signalling redis-server", ex);
		}
	}

	/**
	 * Stops the server at once and waits for the process to end.
	 */
	@Override
	public void close() {
		this.process.destroyForcibly();
		try {
			this.process.waitFor(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private void awaitPing() {
		long deadline = System.nanoTime() + START_TIMEOUT_NANOS;
		IOException lastFailure = null;
		while (System.nanoTime() - deadline < 0) {
			if (!this.process.isAlive()) {
				throw new IllegalStateException("redis-server exited with " + this.process.exitValue() + ": "
						+ this.command + "\n" + logText());
			}
			try {
				if ("+PONG".equals(call("PING"))) {
					return;
				}
			}
			catch (UncheckedIOException ex) {
				lastFailure = ex.getCause();
			}
			// Polling a starting process: the only place a short pause is needed.
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
		}
		close();
		throw new IllegalStateException("redis-server did not answer PING within 10s: " + this.command + "\n"
				+ logText(), lastFailure);
	}

	private String logText() {
		try {
			return Files.readString(this.log);
		}
		catch (IOException ex) {
			return "(no log: " + ex + ")";
		}
	}


	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("No free local port", ex);
		}
	}

	/**
	 * Returns the {@code redis-server} binary these fixtures run, found (or
	 * extracted) once per JVM.
	 * @return the binary
	 * @throws IllegalStateException if no binary is available
	 */
	static synchronized Path binary() {
		if (serverBinary == null) {
			serverBinary = findBinary();
		}
		return serverBinary;
	}

	private static Path findBinary() {
		String configured = System.getProperty(BINARY_PROPERTY);
		if (configured != null && !configured.isBlank()) {
			return Path.of(configured);
		}
		String path = System.getenv("PATH");
		if (path != null) {
			for (String directory : path.split(File.pathSeparator)) {
				Path candidate = Path.of(directory, "redis-server");
				if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
					return candidate;
				}
			}
		}
		return extractEmbedded();
	}

	private static Path extractEmbedded() {
		String resource = embeddedResource();
		try (InputStream in = RedisServerFixture.class.getResourceAsStream(resource)) {
			if (in == null) {
				throw new IllegalStateException("No redis-server on the PATH and no " + resource
						+ " in the embedded-redis test dependency; install Redis or set -D" + BINARY_PROPERTY);
			}
			Path extracted = Files.createTempFile("redis-server-", "");
			extracted.toFile().deleteOnExit();
			Files.copy(in, extracted, StandardCopyOption.REPLACE_EXISTING);
			if (!extracted.toFile().setExecutable(true)) {
				throw new IllegalStateException("Cannot make " + extracted + " executable");
			}
			return extracted;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot extract " + resource, ex);
		}
	}

	private static String embeddedResource() {
		String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
		String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
		boolean arm = arch.equals("aarch64") || arch.equals("arm64");
		if (os.contains("mac")) {
			return arm ? "/redis-server-6.2.6-v5-darwin-arm64" : "/redis-server-6.2.6-v5-darwin-amd64";
		}
		if (os.contains("linux")) {
			return arm ? "/redis-server-6.2.7-linux-arm64" : "/redis-server-6.2.6-v5-linux-amd64";
		}
		throw new IllegalStateException("No embedded redis-server for " + os + "/" + arch
				+ "; install Redis on the PATH or set -D" + BINARY_PROPERTY);
	}

}
