package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The sample app's Spring Boot executable jar running in its own JVM on a free
 * local port, so the server never shares a heap, GC or JIT with the load
 * generator. Its output goes to a temporary log file whose tail is shown if it
 * fails to start. Stopped by {@link #close()}, and by a shutdown hook if the
 * benchmark is interrupted.
 */
final class SampleAppProcess implements AutoCloseable {

	/** The servlet sample's module: {@code spring-boot-maven-plugin} writes its jar into its {@code target}. */
	private static final String MODULE = "sample-app";

	/** Long enough for a JVM pinned to one CPU that other processes share. */
	private static final long STARTUP_TIMEOUT_SECONDS = 240;

	private static final long DEFAULT_POLL_MILLIS = 200;

	private final int port;

	private final Process process;

	private final Path log;

	private final Thread hook;

	private SampleAppProcess(int port, Process process, Path log) {
		this.port = port;
		this.process = process;
		this.log = log;
		this.hook = new Thread(this::stop, "benchmark-sample-app-stop");
	}

	/**
	 * Starts the jar and waits until {@code readinessPath} answers 200.
	 * @param jar the executable jar
	 * @param jvmOptions options of the server JVM, such as {@code -Xmx512m}
	 * @param arguments application arguments ({@code --name=value}); the port is added
	 * @param readinessPath the path polled until it answers 200
	 * @return the running app and the first 200 response
	 */
	static Started start(Path jar, List<String> jvmOptions, List<String> arguments, String readinessPath) {
		return start(CpuPinning.NONE, jar, jvmOptions, arguments, readinessPath, DEFAULT_POLL_MILLIS);
	}

	/**
	 * Starts the jar as a server of a pinned run ({@link CpuPinning#launch}), waits
	 * until {@code readinessPath} answers 200, then pins it to the server's CPUs.
	 * @param pinning where the server runs, {@link CpuPinning#NONE} for anywhere
	 * @param jar the executable jar
	 * @param jvmOptions options of the server JVM, such as {@code -Xmx512m}
	 * @param arguments application arguments ({@code --name=value}); the port is added
	 * @param readinessPath the path polled until it answers 200
	 * @return the running app and the first 200 response
	 */
	static Started start(CpuPinning pinning, Path jar, List<String> jvmOptions, List<String> arguments,
			String readinessPath) {
		return start(pinning, jar, jvmOptions, arguments, readinessPath, DEFAULT_POLL_MILLIS);
	}

	/**
	 * Starts the jar and waits until {@code readinessPath} answers 200, asking
	 * every {@code pollMillis}.
	 * @param jar the executable jar
	 * @param jvmOptions options of the server JVM, such as {@code -Xmx512m}
	 * @param arguments application arguments ({@code --name=value}); the port is added
	 * @param readinessPath the path polled until it answers 200
	 * @param pollMillis the pause between two attempts
	 * @return the running app and the first 200 response
	 */
	static Started start(Path jar, List<String> jvmOptions, List<String> arguments, String readinessPath,
			long pollMillis) {
		return start(CpuPinning.NONE, jar, jvmOptions, arguments, readinessPath, pollMillis);
	}

	/**
	 * Starts the jar as a server of a pinned run and waits until {@code readinessPath}
	 * answers 200, asking every {@code pollMillis}, then pins it to the server's CPUs.
	 * @param pinning where the server runs, {@link CpuPinning#NONE} for anywhere
	 * @param jar the executable jar
	 * @param jvmOptions options of the server JVM, such as {@code -Xmx512m}
	 * @param arguments application arguments ({@code --name=value}); the port is added
	 * @param readinessPath the path polled until it answers 200
	 * @param pollMillis the pause between two attempts
	 * @return the running app and the first 200 response
	 */
	static Started start(CpuPinning pinning, Path jar, List<String> jvmOptions, List<String> arguments,
			String readinessPath, long pollMillis) {
		int port = freePort();
		long began = System.nanoTime();
		// The JVM running this benchmark, so both sides use the same Java.
		List<String> command = new ArrayList<>(
				pinning.launch(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
		command.addAll(jvmOptions);
		command.add("-jar");
		command.add(jar.toString());
		command.add("--server.port=" + port);
		command.add("--server.address=127.0.0.1");
		command.addAll(arguments);
		try {
			Path log = Files.createTempFile("benchmark-sample-app-" + port + "-", ".log");
			log.toFile().deleteOnExit();
			Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
			SampleAppProcess app = new SampleAppProcess(port, process, log);
			Runtime.getRuntime().addShutdownHook(app.hook);
			try {
				HttpConnection.Response first = app.awaitReady(readinessPath, pollMillis);
				pinning.pinToServer(app.pid());
				return new Started(app, first, (System.nanoTime() - began) / 1e9);
			}
			catch (RuntimeException ex) {
				app.close();
				throw ex;
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot run " + command, ex);
		}
	}

	/**
	 * A started app and the response that showed it was ready.
	 *
	 * @param app the running app
	 * @param firstResponse the first 200 response of the readiness path
	 * @param seconds from launch until it answered and was pinned
	 */
	record Started(SampleAppProcess app, HttpConnection.Response firstResponse, double seconds) {
	}

	int port() {
		return this.port;
	}

	/** The JVM's process id (taskset execs java in place, so it is the server's own). */
	long pid() {
		return this.process.pid();
	}

	/**
	 * Finds the servlet sample app's executable jar: {@code configured} if given, else
	 * {@code sample-app/target/sample-app-*.jar} under the working directory or
	 * above the directory holding this benchmark's jar ({@code benchmarks/target}).
	 * @param configured a path given by the user, or {@code null}
	 * @return the jar
	 */
	static Path locateJar(String configured) {
		return locateJar(configured, MODULE);
	}

	/**
	 * Finds a sample app's executable jar: {@code configured} if given, else
	 * {@code <module>/target/<module>-*.jar} under the working directory or
	 * above the directory holding this benchmark's jar ({@code benchmarks/target}).
	 * @param configured a path given by the user, or {@code null}
	 * @param module the sample's Maven module, such as {@code sample-app} or {@code sample-reactive-app}
	 * @return the jar
	 */
	static Path locateJar(String configured, String module) {
		if (configured != null && !configured.isBlank()) {
			Path jar = Path.of(configured);
			if (!Files.isRegularFile(jar)) {
				throw new IllegalStateException("No sample app jar at " + jar);
			}
			return jar;
		}
		String targetDirectory = module + "/target";
		List<Path> roots = new ArrayList<>();
		roots.add(Path.of("").toAbsolutePath());
		try {
			Path codeSource = Path.of(SampleAppProcess.class.getProtectionDomain().getCodeSource().getLocation().toURI());
			// benchmarks/target/benchmarks.jar (or benchmarks/target/classes): the project root is three levels up.
			Path root = codeSource.getParent();
			for (int i = 0; i < 2 && root != null; i++) {
				root = root.getParent();
			}
			if (root != null) {
				roots.add(root);
			}
		}
		catch (URISyntaxException | RuntimeException ex) {
			// no code source: the working directory only
		}
		for (Path root : roots) {
			Path target = root.resolve(targetDirectory);
			if (!Files.isDirectory(target)) {
				continue;
			}
			// The repackaged jar, not the plain one Boot keeps as *.jar.original.
			try (Stream<Path> files = Files.list(target)) {
				List<Path> jars = files
					.filter((p) -> p.getFileName().toString().matches(Pattern.quote(module) + "-.*\\.jar"))
					.sorted()
					.toList();
				if (!jars.isEmpty()) {
					return jars.get(jars.size() - 1);
				}
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}
		throw new IllegalStateException("No sample app jar in " + targetDirectory + " under " + roots
				+ "; build it with: mvn -q -pl benchmarks," + module + " -am package -DskipTests (or pass --app-jar)");
	}

	private HttpConnection.Response awaitReady(String path, long pollMillis) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(STARTUP_TIMEOUT_SECONDS);
		String last = "no answer";
		while (System.nanoTime() - deadline < 0) {
			if (!this.process.isAlive()) {
				throw new NotReady(
						"Sample app exited with " + this.process.exitValue() + " before it was ready" + logTail(), logText());
			}
			try (HttpConnection connection = new HttpConnection("127.0.0.1", this.port, path, 2_000)) {
				HttpConnection.Response response = connection.getFully();
				if (response.status() == 200) {
					return response;
				}
				last = "status " + response.status() + ": " + response.body();
			}
			catch (IOException ex) {
				last = ex.toString();
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(pollMillis));
		}
		throw new NotReady("Sample app did not answer 200 on " + path + " within "
				+ STARTUP_TIMEOUT_SECONDS + "s (last: " + last + ")" + logTail(), logText());
	}

	/**
	 * The app did not start: it exited, or did not answer in time. The message
	 * ends with the last lines it logged; {@link #log()} is all of it, for
	 * callers that look for the cause in the whole stack trace.
	 */
	static final class NotReady extends IllegalStateException {

		private static final long serialVersionUID = 1L;

		private final transient String log;

		NotReady(String message, String log) {
			super(message);
			this.log = log;
		}

		/** Everything the app logged until then; empty if the log could not be read. */
		String log() {
			return this.log;
		}

	}

	/** Everything the app logged so far, or nothing if its log cannot be read. */
	private String logText() {
		try {
			return Files.readString(this.log);
		}
		catch (IOException | RuntimeException ex) {
			return "";
		}
	}

	/** The last lines the app logged, for error messages. */
	String logTail() {
		try {
			List<String> lines = Files.readAllLines(this.log);
			return "\n--- last lines of " + this.log + " ---\n"
					+ String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
		}
		catch (IOException | RuntimeException ex) {
			return " (log " + this.log + " unreadable: " + ex + ")";
		}
	}

	/** Asks the JVM to stop (SIGTERM, so Spring closes its context), then kills it if it is still up after 10 s. */
	private void stop() {
		Processes.stop(this.process);
	}

	@Override
	public void close() {
		stop();
		try {
			Runtime.getRuntime().removeShutdownHook(this.hook);
		}
		catch (IllegalStateException ex) {
			// already shutting down: the hook is running or has run
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

}
