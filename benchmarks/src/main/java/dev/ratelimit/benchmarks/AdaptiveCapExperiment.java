package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Issue 29 point 4: does the adaptive cap keep a service of fixed capacity
 * useful under overload and a retry storm? A Spring Boot server
 * ({@link AdaptiveCapServer}, its own JVM on the server CPU) calls a downstream
 * of 8 workers at 40 ms a call (capacity 200 calls/s, latency growing with
 * its queue); open-loop clients ({@link RetryingLoad}, on the other CPU)
 * offer 0.1×, 1×, 1.5×, 2× and 5× that capacity, half critical, each call
 * retried at once on failure up to 3 attempts with a 1 s timeout. Three
 * servers: no cap, the starter's adaptive cap, Netflix's servlet limiter.
 * Prints a table, writes a chart of the highest load per server into
 * {@code docs/images} and a report into {@code docs/adaptive-experiment.md}.
 * <p>
 * Run from the repository root after {@code mvn -q -pl benchmarks -am package -DskipTests}:
 * {@code java -cp benchmarks/target/benchmarks.jar dev.ratelimit.benchmarks.AdaptiveCapExperiment
 * [--seconds 15] [--warmup 5] [--loads 0.1,1,1.5,2,5] [--modes none,adaptive,netflix] [--algorithm gradient2]
 * [--adaptive queue-size=4,...] [--shares critical=50,normal=10] [--pin auto] [--out docs/adaptive-experiment.md] [--images docs/images]}.
 */
public final class AdaptiveCapExperiment {

	static final double CAPACITY = AdaptiveCapServer.WORKERS * 1000.0 / AdaptiveCapServer.SERVICE_MILLIS;

	private static final int TIMEOUT_MILLIS = 1_000;

	private static final int ATTEMPTS = 3;

	private static final int MAX_CONNECTIONS = 6_000;

	private AdaptiveCapExperiment() {
	}

	public static void main(String[] args) throws Exception {
		run(Options.parse(args), String.join(" ", args));
	}

	/**
	 * Runs the experiment: every mode at every load, and (unless {@code --out
	 * none}) its page and charts.
	 * @param options the options, as {@link #main} reads them
	 * @param arguments the command line, for the page
	 * @return each mode's runs, loads in increasing order
	 */
	static Map<String, List<Row>> run(Options options, String arguments) throws Exception {
		int seconds = options.integer("seconds", 15);
		int warmup = options.integer("warmup", 5);
		List<Double> loads = options.list("loads", "0.1,1,1.5,2,5").stream().map(Double::parseDouble).toList();
		List<String> modes = options.list("modes", "none,adaptive,netflix");
		String algorithm = options.string("algorithm", "gradient2");
		String adaptive = options.string("adaptive", "");
		// Half of the offered calls are critical: critical keeps half the limit, normal a tenth.
		String shares = options.string("shares", "critical=50,normal=10");
		CpuPinning pinning = CpuPinning.of(options.string("pin", "auto"));
		String outPath = options.string("out", "docs/adaptive-experiment.md");
		boolean report = !outPath.equals("none");
		Path out = Path.of(report ? outPath : "adaptive-experiment.md");
		Path images = Path.of(options.string("images", "docs/images"));
		pinning.pinToClient(ProcessHandle.current().pid());
		Map<String, List<Row>> rows = new LinkedHashMap<>();
		long began = System.nanoTime();
		System.out.println(Row.HEADER);
		for (String mode : modes) {
			List<String> serverArgs = serverArguments(mode, algorithm, adaptive, shares);
			List<Row> own = new ArrayList<>();
			rows.put(mode, own);
			Path stats = Files.createTempFile("adaptive-experiment-" + mode + "-", ".stats");
			stats.toFile().deleteOnExit();
			try (Server server = Server.start(pinning, serverArgs, stats)) {
				for (double load : loads) {
					server.awaitIdle();
					long wallStart = System.currentTimeMillis();
					RetryingLoad.Result result = new RetryingLoad("127.0.0.1", server.port, "/work", TIMEOUT_MILLIS,
							ATTEMPTS, MAX_CONNECTIONS)
						.run(load * CAPACITY, 0.5, TimeUnit.SECONDS.toNanos(warmup), TimeUnit.SECONDS.toNanos(seconds));
					List<long[]> samples = server.samples(wallStart, wallStart + (warmup + seconds) * 1000L + 500);
					Row row = new Row(mode, load, result, samples, wallStart);
					own.add(row);
					System.out.println(row.line());
					System.out.println("    statuses " + result.statuses() + "; attempts " + result.attempts
							+ ", retries " + result.retries + ", timeouts " + result.timeouts + ", io errors "
							+ result.ioErrors + ", connects " + result.connects + ", waited for a connection "
							+ result.waitedForConnection + ", unfinished " + result.unfinished);
					if (report && load == loads.get(loads.size() - 1)) {
						Path chart = images.resolve(chartName(mode, load));
						chart(chart, mode, load, result, samples, wallStart, warmup, seconds);
						System.out.println("    chart " + chart);
					}
				}
			}
		}
		if (report) {
			double minutes = (System.nanoTime() - began) / 60e9;
			String page = AdaptiveCapReport.markdown(rows, loads, modes, algorithm, adaptive, shares, pinning, seconds,
					warmup, minutes, arguments, images, out);
			Files.createDirectories(out.toAbsolutePath().getParent());
			Files.writeString(out, page);
			System.out.println();
			System.out.println(page);
		}
		return rows;
	}

	static String chartName(String mode, double load) {
		String name = switch (mode) {
			case "none" -> "no-cap";
			case "adaptive" -> "adaptive-cap";
			default -> mode;
		};
		return name + "-" + AdaptiveCapReport.loadLabel(load) + "x.svg";
	}

	/** The server's arguments for a mode: the starter off without the adaptive cap, its settings with it. */
	static List<String> serverArguments(String mode, String algorithm, String adaptive, String shares) {
		List<String> arguments = new ArrayList<>(List.of("--experiment.mode=" + mode));
		if (!mode.equals("adaptive")) {
			arguments.add("--rate-limit.enabled=false");
			return arguments;
		}
		for (String setting : adaptiveSettings(algorithm, adaptive, shares)) {
			arguments.add("--" + setting);
		}
		return arguments;
	}

	/** The adaptive cap's configuration, as properties. */
	static List<String> adaptiveSettings(String algorithm, String adaptive, String shares) {
		String cap = "rate-limit.concurrency.overload.";
		List<String> settings = new ArrayList<>(List.of(cap + "adaptive.algorithm=" + algorithm,
				cap + "priority=header('X-Priority')", cap + "default-priority=sheddable", cap + "retry-after=1s", cap + "retry-after-spread=4s", "rate-limit.routes[0].pattern=/work",
				"rate-limit.routes[0].concurrency[0]=overload"));
		Map<String, String> adaptiveValues = new LinkedHashMap<>();
		adaptiveValues.put("initial-limit", "20");
		adaptiveValues.put("min-limit", "1");
		adaptiveValues.put("max-limit", "200");
		if (!adaptive.isBlank()) {
			for (String pair : adaptive.split(",")) {
				String[] parts = pair.split("=", 2);
				adaptiveValues.put(parts[0].trim(), parts[1].trim());
			}
		}
		adaptiveValues.forEach((name, value) -> settings.add(cap + "adaptive." + name + "=" + value));
		for (String pair : shares.split(",")) {
			String[] parts = pair.split("=", 2);
			settings.add(cap + "shares." + parts[0].trim() + "=" + parts[1].trim());
		}
		return settings;
	}

	private static void chart(Path file, String mode, double load, RetryingLoad.Result result, List<long[]> samples,
			long wallStart, int warmup, int seconds) throws IOException {
		int n = samples.size();
		double[] times = new double[n];
		double[] limit = new double[n];
		double[] inFlight = new double[n];
		double[] queue = new double[n];
		double[] inWork = new double[n];
		double[] p99 = new double[n];
		double[] goodput = new double[n];
		double[] attempts = new double[n];
		boolean hasLimit = false;
		for (int i = 0; i < n; i++) {
			long[] s = samples.get(i);
			times[i] = (s[0] - wallStart) / 1000.0;
			limit[i] = (s[1] < 0) ? Double.NaN : s[1];
			hasLimit |= s[1] >= 0;
			inFlight[i] = (s[2] < 0) ? Double.NaN : s[2];
			queue[i] = s[3];
			inWork[i] = s[5];
			int bucket = (int) Math.floor(times[i] * 1e9 / RetryingLoad.BUCKET_NANOS) - 1;
			if (bucket >= 0 && bucket < result.bucketServed.length) {
				double perSecond = 1e9 / RetryingLoad.BUCKET_NANOS;
				goodput[i] = result.bucketServed[bucket] * perSecond;
				attempts[i] = result.bucketAttempts[bucket] * perSecond;
				p99[i] = result.bucketCriticalLatencies[bucket].quantile(0.99) / 1e6;
			}
			else {
				goodput[i] = Double.NaN;
				attempts[i] = Double.NaN;
				p99[i] = Double.NaN;
			}
		}
		List<ExperimentChart.Panel> panels = new ArrayList<>();
		if (hasLimit) {
			panels.add(new ExperimentChart.Panel("Concurrency limit and calls in flight under it", false,
					List.of(new ExperimentChart.Series("limit", ExperimentChart.BLUE, limit),
							new ExperimentChart.Series("in flight", ExperimentChart.ORANGE, inFlight))));
		}
		panels.add(new ExperimentChart.Panel("Calls in the server and in the downstream's queue", false,
				List.of(new ExperimentChart.Series("in /work", ExperimentChart.GREEN, inWork),
						new ExperimentChart.Series("downstream queue", ExperimentChart.RED, queue))));
		panels.add(new ExperimentChart.Panel("Critical calls' latency, p99 per 250 ms (ms, log scale)", true,
				List.of(new ExperimentChart.Series("critical p99", ExperimentChart.RED, p99))));
		panels.add(new ExperimentChart.Panel("Calls per second (capacity " + (int) CAPACITY + ")", false,
				List.of(new ExperimentChart.Series("attempts sent", ExperimentChart.GREY, attempts),
						new ExperimentChart.Series("goodput", ExperimentChart.GREEN, goodput))));
		ExperimentChart.write(file,
				AdaptiveCapReport.modeName(mode) + " at " + AdaptiveCapReport.loadLabel(load) + "× capacity (grey: warm-up)", times, panels,
				warmup);
	}

	/** One mode at one load. */
	record Row(String mode, double load, RetryingLoad.Result result, List<long[]> samples, long wallStart) {

		static final String HEADER = String.format(Locale.ROOT, "%-9s %5s %9s %8s %9s %9s %9s %8s %8s %8s", "server",
				"load", "offered/s", "sent/s", "goodput/s", "crit srv", "norm srv", "crit p50", "crit p99", "limit");

		String line() {
			return String.format(Locale.ROOT, "%-9s %5s %9.0f %8.0f %9.0f %8.1f%% %8.1f%% %8.1f %8.1f %8s", this.mode,
					AdaptiveCapReport.loadLabel(this.load) + "x", this.result.offeredPerSecond, sentPerSecond(),
					this.result.goodput(), 100 * this.result.servedShare(true), 100 * this.result.servedShare(false),
					this.result.latencyMillis(true, 0.5), this.result.latencyMillis(true, 0.99), limitText());
		}

		double sentPerSecond() {
			long attempts = 0;
			long warmupBuckets = 0;
			// attempts of the measured window: the buckets after the warm-up
			int from = this.result.bucketAttempts.length
					- (int) Math.round(this.result.seconds * 1e9 / RetryingLoad.BUCKET_NANOS) - 1;
			for (int i = Math.max(0, from); i < this.result.bucketAttempts.length - 1; i++) {
				attempts += this.result.bucketAttempts[i];
				warmupBuckets++;
			}
			return (warmupBuckets == 0) ? Double.NaN : attempts / (warmupBuckets * RetryingLoad.BUCKET_NANOS / 1e9);
		}

		/** The limit's median and range over the measured window, or - without one. */
		String limitText() {
			List<Long> limits = new ArrayList<>();
			long windowStart = this.wallStart + (long) ((this.result.bucketAttempts.length - 1) * 250
					- this.result.seconds * 1000);
			for (long[] sample : this.samples) {
				if (sample[1] >= 0 && sample[0] >= windowStart) {
					limits.add(sample[1]);
				}
			}
			if (limits.isEmpty()) {
				return "-";
			}
			limits.sort(null);
			return limits.get(limits.size() / 2) + " (" + limits.get(0) + "-" + limits.get(limits.size() - 1) + ")";
		}

	}

	/** The server JVM and its stats file. */
	static final class Server implements AutoCloseable {

		final int port;

		private final Process process;

		private final Path stats;

		private final Path log;

		private Server(int port, Process process, Path stats, Path log) {
			this.port = port;
			this.process = process;
			this.stats = stats;
			this.log = log;
		}

		static Server start(CpuPinning pinning, List<String> arguments, Path stats) throws IOException {
			int port;
			try (ServerSocket socket = new ServerSocket(0)) {
				port = socket.getLocalPort();
			}
			List<String> command = new ArrayList<>(
					pinning.launch(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
			command.addAll(List.of("-Xms768m", "-Xmx768m", "-Xss512k", "-XX:+UseG1GC", "-cp",
					System.getProperty("java.class.path"), AdaptiveCapServer.class.getName(), "--server.port=" + port,
					"--server.address=127.0.0.1", "--server.tomcat.threads.max=1000",
					"--server.tomcat.threads.min-spare=100", "--server.tomcat.accept-count=1000",
					"--server.tomcat.max-connections=8000", "--server.tomcat.max-keep-alive-requests=-1",
					"--server.tomcat.keep-alive-timeout=60s", "--spring.main.banner-mode=off",
					"--logging.level.root=WARN", "--experiment.stats-file=" + stats));
			command.addAll(arguments);
			Path log = Files.createTempFile("adaptive-experiment-server-" + port + "-", ".log");
			log.toFile().deleteOnExit();
			Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
			Server server = new Server(port, process, stats, log);
			Runtime.getRuntime().addShutdownHook(new Thread(server::stop, "adaptive-experiment-server-stop"));
			server.awaitReady();
			pinning.pinToServer(process.pid());
			return server;
		}

		private void awaitReady() {
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(240);
			String last = "no answer";
			while (System.nanoTime() - deadline < 0) {
				if (!this.process.isAlive()) {
					throw new IllegalStateException("The server exited with " + this.process.exitValue() + logTail());
				}
				try (HttpConnection connection = new HttpConnection("127.0.0.1", this.port, "/ready", 2_000)) {
					if (connection.get() == 200) {
						// a few calls through the whole path, so the first measured ones find it loaded
						try (HttpConnection work = new HttpConnection("127.0.0.1", this.port, "/work", 2_000)) {
							for (int i = 0; i < 200; i++) {
								work.get();
							}
						}
						return;
					}
				}
				catch (IOException ex) {
					last = ex.toString();
				}
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
			}
			stop();
			throw new IllegalStateException("The server did not answer within 240 s (" + last + ")" + logTail());
		}

		/** Waits (at most 60 s) until the last load has left the server: nothing queued, nothing in /work. */
		void awaitIdle() throws IOException {
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
			while (System.nanoTime() - deadline < 0) {
				List<String> lines = Files.readAllLines(this.stats);
				if (!lines.isEmpty()) {
					String[] last = lines.get(lines.size() - 1).split(" ");
					if (last[3].equals("0") && last[5].equals("0")) {
						break;
					}
				}
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(250));
			}
			// and a second of calm
			LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(1));
		}

		/** The server's samples between two wall-clock times (milliseconds). */
		List<long[]> samples(long from, long to) throws IOException {
			List<long[]> samples = new ArrayList<>();
			for (String line : Files.readAllLines(this.stats)) {
				String[] parts = line.split(" ");
				if (parts.length < 7) {
					continue;
				}
				long[] sample = new long[parts.length];
				for (int i = 0; i < parts.length; i++) {
					sample[i] = Long.parseLong(parts[i]);
				}
				if (sample[0] >= from && sample[0] <= to) {
					samples.add(sample);
				}
			}
			return samples;
		}

		private String logTail() {
			try {
				List<String> lines = Files.readAllLines(this.log);
				return "\n--- " + this.log + " ---\n"
						+ String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		private void stop() {
			Processes.stop(this.process);
		}

		@Override
		public void close() {
			stop();
		}

	}

}
