package dev.ratelimit.benchmarks;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Requests per second and latency of the sample app's {@code GET /api/hello}
 * with the limiter on (route rule {@code /api/** -> per-ip}, its capacity and
 * rate raised so high that every request is admitted) and off
 * ({@code rate-limit.enabled=false}: no filter at all), on the memory and the
 * Redis backend, under the {@link LoadGenerator} on loopback.
 * <p>
 * Every case starts a fresh sample-app JVM ({@link SampleAppProcess}) with the
 * same JVM options and the same arguments but the switch, so a case inherits
 * no JIT or heap state from the one before. The Redis cases share one
 * {@code redis-server} this program starts on a free port
 * ({@link RedisServerProcess}), flushed before each case; the case without
 * limiter gets the same Redis properties, so only the limiter differs. The
 * load generator and the server share the machine's cores: compare the ratio,
 * not the absolute rates, with other machines.
 * <p>
 * Run: {@code java -cp benchmarks/target/benchmarks.jar dev.ratelimit.benchmarks.HttpBenchmark
 * [--seconds 15] [--warmup 10] [--connections 16] [--client-ips 1] [--cases memory,redis] [--app-jar path]
 * [--jvm "-Xms512m -Xmx512m -XX:+UseG1GC"]}. Other code calls {@link #run(Settings)}.
 */
public final class HttpBenchmark {

	/** The endpoint measured: a plain controller returning {@code {"message":"hello"}}. */
	static final String PATH = "/api/hello";

	/** Effectively unlimited, as in the other benchmarks: 10^9 tokens, refilled at 10^9 per second. */
	private static final String CAPACITY = "1000000000";

	/** The goal of the issue: with the limiter, at least this fraction of the throughput without it (memory). */
	public static final double GOAL_RATIO = 0.9;

	private HttpBenchmark() {
	}

	/**
	 * What to run.
	 *
	 * @param seconds measured seconds per case
	 * @param warmup warm-up seconds per case, not recorded
	 * @param rounds how many times each pair of cases runs, alternating with and without
	 * the limiter; each case reports its best round
	 * @param connections concurrent keep-alive connections, one load thread each
	 * @param clientIps distinct client addresses: 1 is the loopback peer alone (one hot key for
	 * {@code per-ip}); more are sent in {@code X-Forwarded-For}, with 127.0.0.1 a trusted proxy
	 * @param backends {@code memory} and/or {@code redis}
	 * @param appJar the sample app's executable jar, or {@code null} to look in {@code sample-app/target}
	 * @param jvmOptions the sample app JVM's options, the same for every case
	 */
	public record Settings(int seconds, int warmup, int rounds, int connections, int clientIps, List<String> backends,
			String appJar, List<String> jvmOptions) {

		/**
		 * Fixed heap (so no case pays for growing it) and G1 named explicitly, because the JVM
		 * falls back to the serial collector on a machine it does not consider a server
		 * (fewer than 2 CPUs or less than 1792 MB), which would change what is measured.
		 */
		public static final List<String> DEFAULT_JVM = List.of("-Xms512m", "-Xmx512m", "-XX:+UseG1GC");

		/** About 2.5 minutes in all: four cases of 10 s warm-up, 15 s measured, plus start-up. */
		public static Settings defaults() {
			return new Settings(15, 10, 2, 16, 1, List.of("memory", "redis"), null, DEFAULT_JVM);
		}

		/**
		 * Reads {@code --seconds}, {@code --warmup}, {@code --connections}, {@code --client-ips}, {@code --cases},
		 * {@code --app-jar} and {@code --jvm} (space-separated options); the rest keep their defaults.
		 * @param given the parsed command line
		 * @return the settings
		 */
		static Settings from(Options given) {
			Settings d = defaults();
			List<String> backends = given.list("cases", String.join(",", d.backends()));
			for (String backend : backends) {
				if (!backend.equals("memory") && !backend.equals("redis")) {
					throw new IllegalArgumentException("--cases takes memory and/or redis, got " + backend);
				}
			}
			String jvm = given.string("jvm", null);
			return new Settings(given.integer("seconds", d.seconds()), given.integer("warmup", d.warmup()),
					given.integer("rounds", d.rounds()), given.integer("connections", d.connections()), given.integer("client-ips", d.clientIps()), backends,
					given.string("app-jar", null), (jvm != null) ? List.of(jvm.trim().split("\\s+")) : d.jvmOptions());
		}

	}

	/**
	 * One case's result.
	 *
	 * @param backend {@code memory} or {@code redis}
	 * @param limiter whether the limiter was on
	 * @param requestsPerSecond measured requests per second
	 * @param p50Micros median latency in microseconds
	 * @param p99Micros 99th percentile latency in microseconds
	 * @param p999Micros 99.9th percentile latency in microseconds
	 * @param requests requests in the measured period
	 * @param non2xx responses that were not 2xx, warm-up included (always 0: a run with any fails)
	 * @param ratio with the limiter, its throughput over the same backend's without it; NaN otherwise
	 */
	public record Row(String backend, boolean limiter, double requestsPerSecond, double p50Micros, double p99Micros,
			double p999Micros, long requests, long non2xx, double ratio) {

		Row withRatio(double ratio) {
			return new Row(this.backend, this.limiter, this.requestsPerSecond, this.p50Micros, this.p99Micros,
					this.p999Micros, this.requests, this.non2xx, ratio);
		}

	}

	public static void main(String[] args) throws Exception {
		Settings options = Settings.from(Options.parse(args));
		List<Row> rows = run(options);
		System.out.println();
		System.out.print(table(rows, options));
		for (Row row : rows) {
			if (row.backend().equals("memory") && row.limiter() && !Double.isNaN(row.ratio())) {
				System.out.printf(Locale.ROOT, "%nGoal, memory: with limiter >= %.2fx without: %s (%.2fx)%n",
						GOAL_RATIO, (row.ratio() >= GOAL_RATIO) ? "met" : "NOT met", row.ratio());
			}
		}
	}

	/**
	 * Runs every case of {@code options}, printing a line per case as it ends.
	 * @param options what to run
	 * @return one row per case: for each backend, with the limiter then without
	 * @throws IllegalStateException if a case got a non-2xx response, a connection failed,
	 * or the limiter was not on (or off) as the case requires
	 */
	public static List<Row> run(Settings options) throws InterruptedException {
		Path jar = SampleAppProcess.locateJar(options.appJar());
		System.out.printf(Locale.ROOT,
				"%s on %s; %d connections, %d client IPs, %ds warm-up, %ds measured per case; server JVM %s%n", PATH,
				jar, options.connections(), options.clientIps(), options.warmup(), options.seconds(),
				options.jvmOptions());
		List<Row> rows = new ArrayList<>();
		for (String backend : options.backends()) {
			if (backend.equals("redis")) {
				try (RedisServerProcess redis = RedisServerProcess.start()) {
					System.out.printf(Locale.ROOT, "redis-server %s on port %d%n", redis.version(), redis.port());
					rows.addAll(backendCases(backend, redis, jar, options));
				}
			}
			else {
				rows.addAll(backendCases(backend, null, jar, options));
			}
		}
		return rows;
	}

	private static List<Row> backendCases(String backend, RedisServerProcess redis, Path jar, Settings options)
			throws InterruptedException {
		// Alternating rounds, each case keeping its best: on a shared two-core machine a
		// single run of each swings by tens of percent with whatever else the machine does.
		Row with = null;
		Row without = null;
		for (int round = 0; round < options.rounds(); round++) {
			with = best(with, runCase(backend, true, redis, jar, options));
			without = best(without, runCase(backend, false, redis, jar, options));
		}
		return List.of(with.withRatio(with.requestsPerSecond() / without.requestsPerSecond()), without);
	}

	private static Row best(Row kept, Row measured) {
		return (kept == null || measured.requestsPerSecond() > kept.requestsPerSecond()) ? measured : kept;
	}

	private static Row runCase(String backend, boolean limiter, RedisServerProcess redis, Path jar, Settings options)
			throws InterruptedException {
		List<String> arguments = new ArrayList<>(List.of(
				"--rate-limit.enabled=" + limiter,
				"--rate-limit.backend=" + backend,
				"--rate-limit.policies.per-ip.capacity=" + CAPACITY,
				"--rate-limit.policies.per-ip.refill=" + CAPACITY + "/1s",
				// Tomcat closes a keep-alive connection after 100 requests by default; reconnecting
				// would add TCP set-up to both cases and, at tens of thousands of requests per
				// second, fill the ephemeral port range with TIME_WAIT sockets.
				"--server.tomcat.max-keep-alive-requests=-1"));
		if (options.clientIps() > 1) {
			// The load generator is the proxy: believe the client address it sends.
			arguments.add("--rate-limit.client-ip.trusted-proxies=127.0.0.1");
		}
		if (redis != null) {
			arguments.add("--spring.data.redis.host=127.0.0.1");
			arguments.add("--spring.data.redis.port=" + redis.port());
			// The limiter's default 100 ms command timeout is for production; on a loaded machine
			// a slow moment would time out, and the fail-open policy would then admit requests
			// without asking Redis, flattering the limiter. Every decision must go to Redis.
			arguments.add("--rate-limit.redis.timeout=5s");
			redis.call("FLUSHALL");
		}
		SampleAppProcess.Started started = SampleAppProcess.start(jar, options.jvmOptions(), arguments, PATH);
		try (SampleAppProcess app = started.app()) {
			try {
				checkLimiter(limiter, started.firstResponse());
				return measure(backend, limiter, redis, app, options);
			}
			catch (IllegalStateException ex) {
				// The server's own account (Redis timeouts, an open circuit breaker, errors) is in its log.
				throw new IllegalStateException(ex.getMessage() + app.logTail(), ex);
			}
		}
	}

	private static Row measure(String backend, boolean limiter, RedisServerProcess redis, SampleAppProcess app,
			Settings options) throws InterruptedException {
		if (redis != null) {
			redis.call("CONFIG", "RESETSTAT");
		}
		LoadGenerator.Result result = LoadGenerator.run("127.0.0.1", app.port(), PATH, options.connections(),
				options.clientIps(), Duration.ofSeconds(options.warmup()), Duration.ofSeconds(options.seconds()));
		if (result.non2xx() > 0) {
			throw new IllegalStateException(String.format(Locale.ROOT,
					"%s, limiter %s: %d of %d responses were not 2xx (first: %d); the limits must admit everything",
					backend, limiter ? "on" : "off", result.non2xx(), result.allRequests(), result.firstNon2xx()));
		}
		String redisCalls = "";
		if (redis != null) {
			redisCalls = String.format(Locale.ROOT, "  Redis scripts/request %.2f",
					checkRedisCalls(limiter, redis, result.allRequests()));
		}
		Row row = new Row(backend, limiter, result.perSecond(), result.percentileMicros(0.50),
				result.percentileMicros(0.99), result.percentileMicros(0.999), result.requests(), result.non2xx(),
				Double.NaN);
		System.out.printf(Locale.ROOT,
				"%-6s limiter %-3s %9.0f requests/s  p50 %7.0f us  p99 %7.0f us  p99.9 %7.0f us  non-2xx %d"
						+ "  sockets %d%s%n",
				backend, limiter ? "on" : "off", row.requestsPerSecond(), row.p50Micros(), row.p99Micros(),
				row.p999Micros(), row.non2xx(), result.connects(), redisCalls);
		return row;
	}

	/** The limiter's rate-limit header fields prove the filter ran; their absence proves it did not. */
	private static void checkLimiter(boolean limiter, HttpConnection.Response response) {
		String policy = response.header("RateLimit-Policy");
		if (limiter && (policy == null || !policy.contains("per-ip"))) {
			throw new IllegalStateException("Limiter should be on but " + PATH
					+ " answered without a per-ip RateLimit-Policy header: " + response.headers());
		}
		if (!limiter && policy != null) {
			throw new IllegalStateException("Limiter should be off but " + PATH + " answered RateLimit-Policy: " + policy);
		}
	}

	/**
	 * Scripts (EVALSHA, EVAL) Redis ran per request: about one with the limiter, none without.
	 * Counted from {@code INFO commandstats}, reset right before the load.
	 */
	private static double checkRedisCalls(boolean limiter, RedisServerProcess redis, long requests) {
		long scripts = redis.calls("evalsha") + redis.calls("eval");
		double perRequest = scripts / (double) requests;
		if (limiter ? perRequest < 0.99 : scripts != 0) {
			throw new IllegalStateException(String.format(Locale.ROOT,
					"redis, limiter %s: %d scripts for %d requests; the case is not what it claims",
					limiter ? "on" : "off", scripts, requests));
		}
		return perRequest;
	}

	/**
	 * The rows as a Markdown table.
	 * @param rows what {@link #run(Settings)} returned
	 * @param options the options of the run, named in the header
	 * @return the table, one line per row, ending with a newline
	 */
	public static String table(List<Row> rows, Settings options) {
		StringBuilder out = new StringBuilder();
		out.append(String.format(Locale.ROOT,
				"| Backend | Limiter | Requests/s | p50 µs | p99 µs | p99.9 µs | Ratio with/without |%n"));
		out.append(String.format("|---|---|---:|---:|---:|---:|---:|%n"));
		for (Row r : rows) {
			out.append(String.format(Locale.ROOT, "| %s | %s | %,.0f | %,.0f | %,.0f | %,.0f | %s |%n", r.backend(),
					r.limiter() ? "on" : "off", r.requestsPerSecond(), r.p50Micros(), r.p99Micros(), r.p999Micros(),
					Double.isNaN(r.ratio()) ? "" : String.format(Locale.ROOT, "%.2f", r.ratio())));
		}
		out.append(String.format(Locale.ROOT,
				"%n%d connections, %d client IPs, %d s warm-up, %d s measured per case, best of %d alternating rounds; "
						+ "non-2xx: %d.%n",
				options.connections(), options.clientIps(), options.warmup(), options.seconds(), options.rounds(),
				rows.stream().mapToLong(Row::non2xx).sum()));
		return out.toString();
	}

}
