package dev.ratelimit.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Spring Boot application jar started in a JVM of its own, as a user starts
 * it ({@code java [options] -jar app.jar [arguments]}), on a port its web
 * server chose: for what a test cannot do inside its own JVM, such as starting
 * an application processed ahead of time with {@code -Dspring.aot.enabled=true}.
 * The process's output goes to a file, shown in the failure when it does not
 * start.
 */
public final class AppProcess implements AutoCloseable {

	/** What Tomcat and Reactor Netty log once they listen: "Tomcat started on port 41233 (http)". */
	private static final Pattern STARTED_ON_PORT = Pattern.compile("started on port (\\d+)");

	/** What Spring Boot logs once the application is ready. */
	private static final Pattern STARTED = Pattern.compile("Started \\S+ in [0-9.]+ seconds");

	private final Process process;

	private final Path log;

	private final int port;

	private AppProcess(Process process, Path log, int port) {
		this.process = process;
		this.log = log;
		this.port = port;
	}

	/**
	 * Starts a jar with the JVM running this test and waits until it serves.
	 * @param jar the executable jar
	 * @param jvmOptions options before {@code -jar}, such as {@code -Dspring.aot.enabled=true}
	 * @param arguments the application's arguments; {@code --server.port=0} is added
	 * @param timeout how long the start may take
	 * @return the started application, to be closed by the caller
	 * @throws IllegalStateException if it exits or does not start in time, with its output
	 */
	public static AppProcess start(Path jar, List<String> jvmOptions, List<String> arguments, Duration timeout) {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.addAll(jvmOptions);
		command.add("-jar");
		command.add(jar.toString());
		command.add("--server.port=0");
		command.addAll(arguments);
		try {
			Path log = Files.createTempFile("app-process-", ".log");
			log.toFile().deleteOnExit();
			Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
			return new AppProcess(process, log, awaitPort(process, log, timeout, command));
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot run " + command, ex);
		}
	}

	// Polls the output: the process is a child of this JVM, and a start takes seconds, so 50 ms costs nothing.
	private static int awaitPort(Process process, Path log, Duration timeout, List<String> command) throws IOException {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (System.nanoTime() < deadline) {
			String output = Files.readString(log, StandardCharsets.UTF_8);
			Matcher port = STARTED_ON_PORT.matcher(output);
			if (port.find() && STARTED.matcher(output).find()) {
				return Integer.parseInt(port.group(1));
			}
			if (!process.isAlive()) {
				throw new IllegalStateException(
						"Exited with " + process.exitValue() + " before it served: " + command + "\n" + output);
			}
			try {
				Thread.sleep(50);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				break;
			}
		}
		process.destroyForcibly();
		throw new IllegalStateException("Not started within " + timeout + ": " + command + "\n"
				+ Files.readString(log, StandardCharsets.UTF_8));
	}

	/**
	 * Returns the port the application's web server listens on.
	 * @return the port
	 */
	public int port() {
		return this.port;
	}

	/**
	 * Returns what the application has written so far.
	 * @return its standard output and error
	 */
	public String output() {
		try {
			return Files.readString(this.log, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Stops the application and whatever it started.
	 */
	@Override
	public void close() {
		this.process.descendants().forEach(ProcessHandle::destroyForcibly);
		this.process.destroyForcibly();
		try {
			this.process.waitFor(30, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
