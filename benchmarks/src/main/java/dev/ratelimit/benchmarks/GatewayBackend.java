package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * The service behind the gateway in {@link GatewayBenchmark}: Reactor Netty
 * answering every request with the same small JSON body and its length, as
 * little work per request as an HTTP server does, so that the gateway is what
 * is measured. It runs in a JVM of its own ({@link #start}), pinned with the
 * load generator, never with the gateway.
 * <p>
 * Run: {@code java -cp benchmarks/target/benchmarks.jar dev.ratelimit.benchmarks.GatewayBackend <port>}.
 */
public final class GatewayBackend implements AutoCloseable {

	private static final byte[] BODY = "{\"message\":\"hello\"}".getBytes(StandardCharsets.US_ASCII);

	private static final long STARTUP_TIMEOUT_SECONDS = 60;

	private final int port;

	private final Process process;

	private final Path log;

	private GatewayBackend(int port, Process process, Path log) {
		this.port = port;
		this.process = process;
		this.log = log;
	}

	/**
	 * Serves on {@code 127.0.0.1:<port>} until the JVM is stopped.
	 * @param args the port
	 */
	public static void main(String[] args) {
		if (args.length != 1) {
			throw new IllegalArgumentException("Usage: GatewayBackend <port>");
		}
		DisposableServer server = HttpServer.create()
			.host("127.0.0.1")
			.port(Integer.parseInt(args[0]))
			.handle((request, response) -> response.header("Content-Type", "application/json")
				.header("Content-Length", Integer.toString(BODY.length))
				.sendByteArray(Mono.just(BODY)))
			.bindNow();
		System.out.println("GatewayBackend serving on port " + server.port());
		server.onDispose().block();
	}

	/**
	 * Starts the backend in a JVM of its own, from this JVM's class path, on a
	 * free port, and waits until it answers.
	 * @param prefix the words before {@code java}, such as {@code taskset -c 0}; none for none
	 * @return the running backend
	 */
	static GatewayBackend start(List<String> prefix) {
		int port = freePort();
		List<String> command = new ArrayList<>(prefix);
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.addAll(List.of("-Xms256m", "-Xmx256m", "-XX:+UseG1GC", "-cp", System.getProperty("java.class.path"),
				GatewayBackend.class.getName(), Integer.toString(port)));
		try {
			Path log = Files.createTempFile("benchmark-gateway-backend-" + port + "-", ".log");
			log.toFile().deleteOnExit();
			Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
			GatewayBackend backend = new GatewayBackend(port, process, log);
			Runtime.getRuntime().addShutdownHook(new Thread(backend::close, "benchmark-gateway-backend-stop"));
			backend.awaitReady();
			return backend;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot run " + command, ex);
		}
	}

	/** @return the base URI the gateway routes to, {@code http://127.0.0.1:<port>} */
	String uri() {
		return "http://127.0.0.1:" + this.port;
	}

	/** @return the backend JVM's process id */
	long pid() {
		return this.process.pid();
	}

	private void awaitReady() {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(STARTUP_TIMEOUT_SECONDS);
		String last = "no answer";
		while (System.nanoTime() - deadline < 0) {
			if (!this.process.isAlive()) {
				close();
				throw new IllegalStateException("The gateway backend exited with " + this.process.exitValue() + logTail());
			}
			try (HttpConnection connection = new HttpConnection("127.0.0.1", this.port, "/hello", 2_000)) {
				HttpConnection.Response response = connection.getFully();
				if (response.status() == 200) {
					return;
				}
				last = "status " + response.status();
			}
			catch (IOException ex) {
				last = ex.toString();
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
		}
		close();
		throw new IllegalStateException("The gateway backend did not answer within " + STARTUP_TIMEOUT_SECONDS + " s ("
				+ last + ")" + logTail());
	}

	private String logTail() {
		try {
			List<String> lines = Files.readAllLines(this.log);
			return "\n--- " + this.log + " ---\n"
					+ String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
		}
		catch (IOException ex) {
			return " (log " + this.log + " unreadable: " + ex + ")";
		}
	}

	@Override
	public void close() {
		Processes.stop(this.process);
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
