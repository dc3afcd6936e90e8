package dev.ratelimit.benchmarks;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A {@code redis-server} on a free local port, started and stopped by the
 * benchmark itself. A trimmed copy of the autoconfigure module's test fixture
 * ({@code dev.ratelimit.support.RedisServerFixture}), which is not on this
 * module's classpath. The binary is the one named by {@code -Dbenchmark.redis-server},
 * else the {@code redis-server} on the {@code PATH}.
 */
final class RedisServerProcess implements AutoCloseable {

	private final int port;

	private final Process process;

	private RedisServerProcess(int port, Process process) {
		this.port = port;
		this.process = process;
	}

	static RedisServerProcess start() {
		return start(List.of());
	}

	/**
	 * Starts the server under another program, such as {@code valgrind}.
	 * @param wrapper the program and its options, before the server's command line; empty for none
	 * @return the server, answering PING
	 */
	static RedisServerProcess start(List<String> wrapper) {
		Path binary = binary();
		int port = freePort();
		List<String> command = new ArrayList<>(wrapper);
		command.addAll(List.of(binary.toString(), "--port", Integer.toString(port), "--bind", "127.0.0.1", "--save",
				"", "--appendonly", "no", "--dir", dataDirectory(port).toString()));
		try {
			Path log = Files.createTempFile("benchmark-redis-" + port + "-", ".log");
			log.toFile().deleteOnExit();
			Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
			RedisServerProcess server = new RedisServerProcess(port, process);
			Runtime.getRuntime().addShutdownHook(new Thread(server::close, "benchmark-redis-stop"));
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

	int port() {
		return this.port;
	}

	/** The server's process id, for pinning it to CPUs (under valgrind, valgrind's, which is the same process). */
	long pid() {
		return this.process.pid();
	}

	/** The server's version, from INFO server. */
	String version() {
		String info = call("INFO", "server");
		for (String line : info.split("\r\n")) {
			if (line.startsWith("redis_version:")) {
				return line.substring("redis_version:".length());
			}
		}
		return "unknown";
	}

	/**
	 * Returns how many times the server ran a command since it started or since
	 * the last {@code CONFIG RESETSTAT}, from {@code INFO commandstats}.
	 * @param command the command in lower case, such as {@code evalsha}
	 * @return the number of calls, 0 if it never ran
	 */
	long calls(String command) {
		return calls(call("INFO", "commandstats"), command);
	}

	/**
	 * Returns how many scripts the server ran since the last
	 * {@code CONFIG RESETSTAT}, however they were sent ({@code EVALSHA},
	 * {@code EVAL}, {@code FCALL}, {@code FCALL_RO}), from one {@code INFO}.
	 * @return the number of script calls
	 */
	long scripts() {
		String stats = call("INFO", "commandstats");
		return calls(stats, "evalsha") + calls(stats, "eval") + calls(stats, "fcall") + calls(stats, "fcall_ro");
	}

	private static long calls(String commandStats, String command) {
		String prefix = "cmdstat_" + command + ":calls=";
		for (String line : commandStats.split("\r\n")) {
			if (line.startsWith(prefix)) {
				String calls = line.substring(prefix.length());
				return Long.parseLong(calls.substring(0, calls.indexOf(',')));
			}
		}
		return 0;
	}

	/**
	 * Sends one command on a fresh connection and returns its reply: a status,
	 * error or integer line, or the text of a bulk string.
	 */
	String call(String... arguments) {
		try (Socket socket = connect()) {
			send(socket, arguments);
			InputStream in = socket.getInputStream();
			String line = readLine(in);
			if (!line.startsWith("$")) {
				return line;
			}
			int length = Integer.parseInt(line.substring(1));
			byte[] body = in.readNBytes(length + 2);
			return new String(body, 0, length, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Redis on port " + this.port + " did not answer " + arguments[0], ex);
		}
	}

	/**
	 * Sends one command on a fresh connection and returns its whole reply: a
	 * status as a {@code String}, an integer as a {@code Long}, a bulk string as
	 * a {@code String} (or {@code null}), an array as a {@code List} of these.
	 * @param arguments the command and its arguments
	 * @return the reply
	 * @throws IllegalStateException if Redis answers with an error
	 */
	Object reply(String... arguments) {
		try (Socket socket = connect()) {
			send(socket, arguments);
			return readReply(socket.getInputStream(), arguments[0]);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Redis on port " + this.port + " did not answer " + arguments[0], ex);
		}
	}

	/** CPU seconds the server process has used (user and system), from INFO cpu: microsecond resolution. */
	double cpuSeconds() {
		double seconds = 0;
		for (String line : call("INFO", "cpu").split("\r\n")) {
			if (line.startsWith("used_cpu_user:") || line.startsWith("used_cpu_sys:")) {
				seconds += Double.parseDouble(line.substring(line.indexOf(':') + 1));
			}
		}
		return seconds;
	}

	private Socket connect() throws IOException {
		Socket socket = new Socket();
		socket.connect(new InetSocketAddress("127.0.0.1", this.port), 1000);
		socket.setSoTimeout(5000);
		return socket;
	}

	private static void send(Socket socket, String... arguments) throws IOException {
		OutputStream out = socket.getOutputStream();
		StringBuilder request = new StringBuilder("*").append(arguments.length).append("\r\n");
		for (String argument : arguments) {
			byte[] bytes = argument.getBytes(StandardCharsets.UTF_8);
			request.append('$').append(bytes.length).append("\r\n").append(argument).append("\r\n");
		}
		out.write(request.toString().getBytes(StandardCharsets.UTF_8));
		out.flush();
	}

	private static Object readReply(InputStream in, String command) throws IOException {
		String line = readLine(in);
		if (line.isEmpty()) {
			throw new IOException("Connection closed before the reply to " + command);
		}
		String rest = line.substring(1);
		switch (line.charAt(0)) {
			case '+':
				return rest;
			case '-':
				throw new IllegalStateException("Redis answered " + command + " with " + rest);
			case ':':
				return Long.parseLong(rest);
			case '$': {
				int length = Integer.parseInt(rest);
				if (length < 0) {
					return null;
				}
				byte[] body = in.readNBytes(length + 2);
				return new String(body, 0, length, StandardCharsets.UTF_8);
			}
			case '*': {
				int length = Integer.parseInt(rest);
				if (length < 0) {
					return null;
				}
				List<Object> items = new ArrayList<>(length);
				for (int i = 0; i < length; i++) {
					items.add(readReply(in, command));
				}
				return items;
			}
			default:
				throw new IOException("Unexpected reply to " + command + ": " + line);
		}
	}

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
		// Long enough for valgrind to start the server on a loaded machine.
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (System.nanoTime() - deadline < 0) {
			if (!this.process.isAlive()) {
				throw new IllegalStateException("redis-server exited with " + this.process.exitValue());
			}
			try {
				if ("+PONG".equals(call("PING"))) {
					return;
				}
			}
			catch (UncheckedIOException ex) {
				// not up yet
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
		}
		close();
		throw new IllegalStateException("redis-server did not answer PING within 30s");
	}

	private static String readLine(InputStream in) throws IOException {
		StringBuilder line = new StringBuilder();
		int c;
		while ((c = in.read()) != -1) {
			if (c == '\r') {
				in.read();
				break;
			}
			line.append((char) c);
		}
		return line.toString();
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("No free local port", ex);
		}
	}

	private static Path binary() {
		return executable("redis-server", "benchmark.redis-server", "install Redis");
	}

	/**
	 * Finds a program the benchmarks run: the path in a system property, else
	 * the first of that name on the {@code PATH}.
	 * @param name the program's file name
	 * @param property the system property that may name it
	 * @param hint how to get it, for the error
	 * @return its path
	 * @throws IllegalStateException if there is none
	 */
	static Path executable(String name, String property, String hint) {
		String configured = System.getProperty(property);
		if (configured != null && !configured.isBlank()) {
			if (!Files.isExecutable(Path.of(configured))) {
				throw new IllegalStateException("-D" + property + "=" + configured + " is not an executable file");
			}
			return Path.of(configured);
		}
		String path = System.getenv("PATH");
		if (path != null) {
			for (String directory : path.split(File.pathSeparator)) {
				Path candidate = Path.of(directory, name);
				if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
					return candidate;
				}
			}
		}
		throw new IllegalStateException("No " + name + " on the PATH; " + hint + " or set -D" + property);
	}

}
