package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.net.HttpURLConnection;
import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The {@code main} that {@link WarmStartBenchmark} runs in a JVM of its own,
 * on the sample app's class path: starts the application, asks
 * {@code /api/hello} (or the path of system property {@value #PATH_PROPERTY})
 * once, closes it, again and again, and prints the CPU time and the bytes
 * allocated by the calling thread for each start (until
 * that answer), one line each:
 * {@code restart <i> <cpu-nanos> <wall-nanos> <allocated-bytes> <RateLimit-Policy header or ->}.
 * <p>
 * Uses only the JDK and reflection, since it runs beside the sample app's own
 * Spring jars, not the benchmark's.
 * Arguments: the application's main class, the number of starts, then the
 * application's arguments.
 */
public final class RestartDriver {

	/** The system property naming the path asked, {@code /api/hello} by default. */
	static final String PATH_PROPERTY = "benchmark.path";

	private static final String PATH = System.getProperty(PATH_PROPERTY, "/api/hello");

	private RestartDriver() {
	}

	public static void main(String[] args) throws Exception {
		Class<?> application = Class.forName(args[0]);
		int starts = Integer.parseInt(args[1]);
		List<String> given = new ArrayList<>(Arrays.asList(args).subList(2, args.length));
		given.add("--server.port=0");
		String[] arguments = given.toArray(String[]::new);
		Class<?> springApplication = Class.forName("org.springframework.boot.SpringApplication");
		// HotSpot's extension: bytes allocated, which no other process on the machine can change.
		com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory
			.getThreadMXBean();
		for (int i = 0; i < starts; i++) {
			long cpu = threads.getCurrentThreadCpuTime();
			long allocated = threads.getCurrentThreadAllocatedBytes();
			long wall = System.nanoTime();
			AutoCloseable context = (AutoCloseable) springApplication
				.getMethod("run", Class.class, String[].class)
				.invoke(null, application, arguments);
			Object environment = context.getClass().getMethod("getEnvironment").invoke(context);
			String port = (String) environment.getClass()
				.getMethod("getProperty", String.class)
				.invoke(environment, "local.server.port");
			String policy = get(port);
			long cpuNanos = threads.getCurrentThreadCpuTime() - cpu;
			long allocatedBytes = threads.getCurrentThreadAllocatedBytes() - allocated;
			long wallNanos = System.nanoTime() - wall;
			context.close();
			System.out.printf(Locale.ROOT, "restart %d %d %d %d %s%n", i, cpuNanos, wallNanos, allocatedBytes,
					(policy != null) ? policy.replace(' ', '_') : "-");
		}
		System.exit(0);
	}

	/** Asks the path once; returns its RateLimit-Policy header field, {@code null} without one. */
	private static String get(String port) throws IOException {
		HttpURLConnection connection = (HttpURLConnection) URI.create("http://127.0.0.1:" + port + PATH)
			.toURL()
			.openConnection();
		try (InputStream body = connection.getInputStream()) {
			body.readAllBytes();
			if (connection.getResponseCode() != 200) {
				throw new IllegalStateException(PATH + " answered " + connection.getResponseCode());
			}
			return connection.getHeaderField("RateLimit-Policy");
		}
		finally {
			connection.disconnect();
		}
	}

}
