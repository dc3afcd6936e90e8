package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * What a limiter costs a Spring Cloud Gateway route: the gateway sample
 * ({@code sample-gateway}) in front of a minimal backend ({@link GatewayBackend}),
 * saturated with a closed loop through one route at a time ({@link Variant}):
 * the plain route (the floor), the starter's {@code RateLimit} filter on the
 * memory backend, the same filter on Redis, and the gateway's own
 * {@code RequestRateLimiter} with its {@code RedisRateLimiter} on the same
 * Redis. Every limit is so high that every request is admitted: these are the
 * costs of admitted decisions.
 * <p>
 * The gateway JVMs run on one CPU, the load generator, the backend and
 * {@code redis-server} on the others ({@link CpuPinning}). The routes of one
 * configuration share a gateway JVM, as a gateway's routes do: the plain route
 * and the filter on memory in one, the two limiters on Redis in another (JVMs
 * started in mirrored order when there are several of each), all started and
 * warmed up, their routes in turn, until their JIT compilers settle, before the
 * first round; each round measures every route in turn, so that a change in the
 * machine's load hits all of them alike. A variant reports its median round;
 * its ratios are the medians over rounds of the ratio within a round.
 * <p>
 * The run fails rather than report a variant that is not what it claims:
 * every answer must be 2xx; the starter's variants must have decided every
 * request ({@code rate.limit.decisions}, allowed, grew by the requests), the
 * others none; on Redis, a script must have run per request ({@code INFO
 * commandstats}, reset before each measurement), and none without it; the
 * first answer of each route must carry its limiter's header fields
 * ({@code RateLimit-Policy}, or the gateway's {@code X-RateLimit-Remaining}
 * with a real count, not the -1 it answers when Redis failed), or none.
 * <p>
 * Run, from the repository root, after
 * {@code mvn -q -pl benchmarks,sample-gateway -am package -DskipTests}:
 * {@code java -cp benchmarks/target/benchmarks.jar dev.ratelimit.benchmarks.GatewayBenchmark
 * [--variants plain,memory,redis,redis-rate-limiter] [--seconds 5] [--warmup 20] [--rounds 6] [--connections 16]
 * [--jvms 2] [--pin auto] [--gateway-jar path] [--jvm "-Xms512m -Xmx512m -XX:+UseG1GC -XX:CICompilerCount=8 -XX:-UseDynamicNumberOfCompilerThreads"] [--max-warmup 180]}.
 */
public final class GatewayBenchmark {

	/** Effectively unlimited, as in the other benchmarks: 10^9 tokens, refilled at 10^9 per second. */
	private static final String CAPACITY = "1000000000";

	/** Goal: the RateLimit filter on memory, at least this fraction of the plain route's throughput. */
	public static final double GOAL_MEMORY_RATIO = 0.9;

	/** Goal: the RateLimit filter on Redis, at least this fraction of the gateway's RedisRateLimiter's throughput. */
	public static final double GOAL_REDIS_RATIO = 1.0;

	private static final int WARMUP_STEP_SECONDS = 5;

	private static final int SETTLED_COMPILE_MILLIS = 50;

	private GatewayBenchmark() {
	}

	/**
	 * A route measured: which gateway configuration, which path.
	 */
	enum Variant {

		/** The route without a limiter: the floor. */
		PLAIN("plain route", "/plain/hello", false),

		/** {@code RateLimit=per-ip}, memory backend. */
		MEMORY("RateLimit, memory", "/limited/hello", false),

		/** {@code RateLimit=per-ip}, Redis backend (the sample's profile {@code compare}). */
		REDIS("RateLimit, Redis", "/limited/hello", true),

		/** The gateway's {@code RequestRateLimiter} with its {@code RedisRateLimiter} (profile {@code compare}). */
		REDIS_RATE_LIMITER("RedisRateLimiter", "/redis-rate-limiter/hello", true);

		final String label;

		final String path;

		final boolean redis;

		Variant(String label, String path, boolean redis) {
			this.label = label;
			this.path = path;
			this.redis = redis;
		}

		/** @return its name in {@code --variants}: {@code plain}, {@code memory}, {@code redis}, {@code redis-rate-limiter} */
		String option() {
			return name().toLowerCase(Locale.ROOT).replace('_', '-');
		}

		/** @return whether the starter decides its requests */
		boolean ours() {
			return this == MEMORY || this == REDIS;
		}

		static Variant of(String option) {
			for (Variant variant : values()) {
				if (variant.option().equals(option)) {
					return variant;
				}
			}
			throw new IllegalArgumentException(
					"--variants takes plain, memory, redis and/or redis-rate-limiter, got " + option);
		}

	}

	/**
	 * What to run.
	 *
	 * @param variants the routes measured
	 * @param seconds measured seconds per route and round, after one second of ramp-up
	 * @param warmup warm-up seconds per JVM before the first round, at least (then until the JIT settles)
	 * @param rounds how many times every route is measured, in turn
	 * @param connections the closed loop's keep-alive connections, one load thread each
	 * @param jvms gateway JVMs per configuration (memory, Redis), started in mirrored order
	 * @param pin {@code auto}, {@code none} or {@code SERVER/CLIENT} CPU lists (see {@link CpuPinning#of})
	 * @param gatewayJar the gateway sample's executable jar, or {@code null} to look in {@code sample-gateway/target}
	 * @param jvmOptions the gateway JVMs' options
	 * @param maxWarmup the longest warm-up per JVM, in seconds, however busy its JIT still is
	 */
	public record Settings(List<Variant> variants, int seconds, int warmup, int rounds, int connections, int jvms,
			String pin, String gatewayJar, List<String> jvmOptions, int maxWarmup) {

		/**
		 * The defaults: about 8 minutes on two busy cores. Two JVMs per configuration in mirrored
		 * order, because where a JVM is in the start order changes its cost per request
		 * (see {@link HttpBenchmark}).
		 * @return the defaults
		 */
		public static Settings defaults() {
			return new Settings(List.of(Variant.values()), 5, 20, 6, 16, 2, "auto", null,
					HttpBenchmark.Settings.WARMED_JVM, HttpBenchmark.Settings.DEFAULT_MAX_WARMUP);
		}

		/**
		 * Reads the options of the class comment; the rest keep their defaults.
		 * @param given the parsed command line
		 * @return the settings
		 */
		static Settings from(Options given) {
			Settings d = defaults();
			List<Variant> variants = given.list("variants", "plain,memory,redis,redis-rate-limiter")
				.stream()
				.map(Variant::of)
				.toList();
			String jvm = given.string("jvm", null);
			return new Settings(variants, given.integer("seconds", d.seconds()), given.integer("warmup", d.warmup()),
					given.integer("rounds", d.rounds()), given.integer("connections", d.connections()),
					given.integer("jvms", d.jvms()), given.string("pin", d.pin()), given.string("gateway-jar", null),
					(jvm != null) ? List.of(jvm.trim().split("\\s+")) : d.jvmOptions(),
					given.integer("max-warmup", d.maxWarmup()));
		}

		/** @return the command line that runs these settings, for the notes */
		String command() {
			return "java -cp benchmarks/target/benchmarks.jar " + GatewayBenchmark.class.getName() + " --variants "
					+ String.join(",", this.variants.stream().map(Variant::option).toList()) + " --seconds "
					+ this.seconds + " --warmup " + this.warmup + " --rounds " + this.rounds + " --connections "
					+ this.connections + " --jvms " + this.jvms + " --pin " + this.pin;
		}

	}

	/**
	 * One variant's median round.
	 *
	 * @param variant the route's label
	 * @param requestsPerSecond measured requests per second
	 * @param p50Micros median latency in microseconds (closed loop: service time under the load)
	 * @param p99Micros 99th percentile latency in microseconds
	 * @param p999Micros 99.9th percentile latency in microseconds
	 * @param requests requests in the measured period
	 * @param cpuMicrosPerRequest the gateway JVM's CPU time per request (every thread), in microseconds
	 * @param serverCpuShare the gateway JVM's CPU time over wall time (1.0 is one CPU busy)
	 * @param versusPlain the median over rounds of its throughput over the plain route's; NaN for that route or
	 * when it was not measured
	 * @param versusRedisRateLimiter for the RateLimit filter on Redis, the median over rounds of its throughput
	 * over the gateway's RedisRateLimiter's; NaN otherwise
	 */
	public record Row(String variant, double requestsPerSecond, double p50Micros, double p99Micros, double p999Micros,
			long requests, double cpuMicrosPerRequest, double serverCpuShare, double versusPlain,
			double versusRedisRateLimiter) {

		Row withRatios(double versusPlain, double versusRedisRateLimiter) {
			return new Row(this.variant, this.requestsPerSecond, this.p50Micros, this.p99Micros, this.p999Micros,
					this.requests, this.cpuMicrosPerRequest, this.serverCpuShare, versusPlain, versusRedisRateLimiter);
		}

		/** One variant's round over its JVMs: the mean of each figure, requests summed. */
		static Row mean(List<Row> rows) {
			Row first = rows.get(0);
			return new Row(first.variant, average(rows, Row::requestsPerSecond), average(rows, Row::p50Micros),
					average(rows, Row::p99Micros), average(rows, Row::p999Micros),
					rows.stream().mapToLong(Row::requests).sum(), average(rows, Row::cpuMicrosPerRequest),
					average(rows, Row::serverCpuShare), Double.NaN, Double.NaN);
		}

		private static double average(List<Row> rows, ToDoubleFunction<Row> figure) {
			return rows.stream().mapToDouble(figure).average().orElseThrow();
		}

	}

	public static void main(String[] args) throws Exception {
		Settings options = Settings.from(Options.parse(args));
		List<Row> rows = run(options);
		System.out.println();
		System.out.print(table(rows, options));
		System.out.println();
		for (HttpBenchmark.GoalCheck goal : goals(rows)) {
			System.out.printf(Locale.ROOT, "Goal: %s %s: %s (%s)%n", goal.name(), goal.target(),
					goal.met() ? "met" : "NOT met", goal.measured());
		}
	}

	/**
	 * The part {@code gateway} of {@link RunAllBenchmarks}: runs with the
	 * defaults but one JVM per configuration, {@link RunAllBenchmarks#HTTP_ROUNDS} rounds of 3 s after at
	 * least 15 s of warm-up and at most
	 * {@link RunAllBenchmarks#THROUGHPUT_MAX_WARMUP} s (or briefly), records the
	 * goals and returns the section. One JVM halves the part's time; its goals are throughput
	 * ratios, which the start order moves far less than the goal's margin.
	 * @param quick whether to run briefly, to try the harness
	 * @param goals where the goals go
	 * @return the section, Markdown
	 * @throws InterruptedException if interrupted
	 */
	static String part(boolean quick, Goals goals) throws InterruptedException {
		Settings options = Settings.from(Options.parse(quick
				? new String[] { "--seconds", "2", "--warmup", "2", "--rounds", "1", "--jvms", "1" }
				: new String[] { "--jvms", "1", "--seconds", "3", "--warmup", "15", "--rounds",
						Integer.toString(RunAllBenchmarks.HTTP_ROUNDS), "--max-warmup",
						RunAllBenchmarks.THROUGHPUT_MAX_WARMUP }));
		List<Row> rows = run(options);
		goals.gateway(goals(rows));
		return "### Gateway\n\n" + table(rows, options) + '\n';
	}

	/**
	 * Runs every variant of {@code options}, printing a line per route and round.
	 * @param options what to run
	 * @return the median row of every variant, in the order of {@code options}
	 * @throws IllegalStateException if an answer was not 2xx, a connection failed, or a
	 * variant did not decide as it claims
	 * @throws InterruptedException if interrupted
	 */
	public static List<Row> run(Settings options) throws InterruptedException {
		Path jar = SampleAppProcess.locateJar(options.gatewayJar(), "sample-gateway");
		CpuPinning pinning = CpuPinning.of(options.pin());
		System.out.printf(Locale.ROOT,
				"Gateway %s; routes %s; %d s warm-up, %d rounds of %d s; %d connections; %d JVM(s) per configuration, %s; %s%n",
				jar, options.variants().stream().map(Variant::option).toList(), options.warmup(), options.rounds(),
				options.seconds(), options.connections(), options.jvms(), options.jvmOptions(), pinning.describe());
		long self = ProcessHandle.current().pid();
		String unpinned = pinning.pinToClient(self);
		boolean redisNeeded = options.variants().stream().anyMatch((v) -> v.redis);
		try (RedisServerProcess redis = redisNeeded ? RedisServerProcess.start() : null;
				GatewayBackend backend = GatewayBackend.start(clientPrefix(pinning))) {
			if (redis != null) {
				pinning.pinToClient(redis.pid());
				System.out.printf(Locale.ROOT, "redis-server %s on port %d%n", redis.version(), redis.port());
			}
			System.out.println("Backend " + backend.uri());
			try (Gateways gateways = Gateways.start(jar, backend, redis, pinning, options)) {
				gateways.warmUp();
				return gateways.rounds();
			}
		}
		finally {
			CpuPinning.restore(self, unpinned);
		}
	}

	/** {@code taskset -c <client CPUs>}, so that the backend JVM never runs on the gateway's CPU; or nothing. */
	private static List<String> clientPrefix(CpuPinning pinning) {
		return pinning.pins() ? List.of("taskset", "-c", pinning.clientCpus()) : List.of();
	}

	/** A gateway JVM's arguments: the memory backend, or (profile {@code compare}) Redis for both limiters. */
	private static List<String> arguments(boolean onRedis, GatewayBackend backend, RedisServerProcess redis) {
		List<String> arguments = new ArrayList<>(List.of("--sample.gateway.backend-uri=" + backend.uri(),
				"--rate-limit.policies.per-ip.capacity=" + CAPACITY,
				"--rate-limit.policies.per-ip.refill=" + CAPACITY + "/1s",
				"--sample.gateway.compare.replenish-rate=" + CAPACITY,
				"--sample.gateway.compare.burst-capacity=" + CAPACITY));
		if (onRedis) {
			arguments.addAll(List.of("--spring.profiles.active=compare", "--spring.data.redis.host=127.0.0.1",
					"--spring.data.redis.port=" + redis.port(),
					// Every decision must go to Redis: a Redis silent for the default 250 ms would let the
					// failure mode decide without it, flattering the starter.
					"--rate-limit.redis.timeout=5s", "--rate-limit.redis.busy-timeout=5s"));
		}
		return arguments;
	}

	/** One route measured in a gateway JVM: the {@code number}-th JVM of its configuration, counting from 0. */
	private record Instance(Variant variant, int number) {

		String label() {
			return (this.number == 0) ? this.variant.label : this.variant.label + " #" + (this.number + 1);
		}

	}

	/**
	 * A running gateway JVM, with its probe and the routes measured in it.
	 *
	 * @param app the JVM
	 * @param probe its probe
	 * @param routes the instances it serves, in the order warmed up
	 */
	private record Gateway(SampleAppProcess app, ServerProbe probe, List<Instance> routes) {

		String label() {
			return String.join(" + ", this.routes.stream().map(Instance::label).toList());
		}

	}

	/**
	 * The running gateway JVMs. The routes of one configuration share a JVM,
	 * as the routes of a gateway do: the plain route and the filter on memory
	 * in one, the filter on Redis and the RedisRateLimiter (profile
	 * {@code compare}) in another. Each round measures one route at a time, so
	 * a ratio compares two routes of the same JVM in the same minute, and a
	 * part needs half the JVMs, each of which takes a minute to start and warm up.
	 */
	private static final class Gateways implements AutoCloseable {

		private final Map<Instance, Gateway> routes = new LinkedHashMap<>();

		private final List<Gateway> jvms = new ArrayList<>();

		private final RedisServerProcess redis;

		private final Settings options;

		private Gateways(RedisServerProcess redis, Settings options) {
			this.redis = redis;
			this.options = options;
		}

		/**
		 * Starts {@code options.jvms()} gateway JVMs per configuration (memory, Redis) that a
		 * variant needs, in mirrored order (A B, then B A, ...).
		 */
		static Gateways start(Path jar, GatewayBackend backend, RedisServerProcess redis, CpuPinning pinning,
				Settings options) {
			Gateways gateways = new Gateways(redis, options);
			try {
				for (int number = 0; number < options.jvms(); number++) {
					List<Boolean> order = new ArrayList<>(options.variants()
						.stream()
						.map((variant) -> variant.redis)
						.distinct()
						.toList());
					if (number % 2 == 1) {
						Collections.reverse(order);
					}
					for (boolean onRedis : order) {
						int jvm = number;
						List<Instance> routes = options.variants()
							.stream()
							.filter((variant) -> variant.redis == onRedis)
							.map((variant) -> new Instance(variant, jvm))
							.toList();
						SampleAppProcess.Started started = SampleAppProcess.start(pinning, jar, options.jvmOptions(),
								arguments(onRedis, backend, redis), routes.get(0).variant().path);
						Gateway gateway = new Gateway(started.app(),
								new ServerProbe(started.app().pid(), started.app().port()), routes);
						gateways.jvms.add(gateway);
						routes.forEach((route) -> gateways.routes.put(route, gateway));
						checkHeaders(routes.get(0).variant(), started.firstResponse());
						for (Instance route : routes.subList(1, routes.size())) {
							checkHeaders(route.variant(), firstResponse(started.app(), route.variant()));
						}
						System.out.printf(Locale.ROOT, "  started %-44s on port %d in %.1f s%n", gateway.label(),
								started.app().port(), started.seconds());
					}
				}
				return gateways;
			}
			catch (RuntimeException ex) {
				gateways.close();
				throw ex;
			}
		}

		private static HttpConnection.Response firstResponse(SampleAppProcess app, Variant variant) {
			try (HttpConnection connection = new HttpConnection("127.0.0.1", app.port(), variant.path, 2_000)) {
				return connection.getFully();
			}
			catch (IOException ex) {
				throw new UncheckedIOException(variant.label + ": " + variant.path + " did not answer", ex);
			}
		}

		/**
		 * Warms every JVM up with the closed loop, its routes in turn, {@value #WARMUP_STEP_SECONDS} s
		 * at a time: for at least the warm-up, then until its JIT compilers spent less than
		 * {@value #SETTLED_COMPILE_MILLIS} ms of CPU in a step of every route (at most
		 * {@code --max-warmup} s, 180 by default): a round measured while the gateway still
		 * compiles measures the compiler.
		 */
		void warmUp() throws InterruptedException {
			for (Gateway gateway : this.jvms) {
				int port = gateway.app().port();
				List<Instance> routes = gateway.routes();
				int total = 0;
				int settled = 0;
				long compiled = -1;
				LoadGenerator.Result result = null;
				for (int step = 0; settled < routes.size() && total < this.options.maxWarmup(); step++) {
					Instance route = routes.get(step % routes.size());
					long before = gateway.probe().compileMillis();
					// Sampled as a round samples it, so that the code that serves the metrics is compiled now.
					gateway.probe().decisions();
					result = LoadGenerator.run("127.0.0.1", port, route.variant().path, this.options.connections(), 1,
							Duration.ZERO, Duration.ofSeconds(WARMUP_STEP_SECONDS));
					gateway.probe().decisions();
					checkStatus(route, result);
					total += WARMUP_STEP_SECONDS;
					compiled = gateway.probe().compileMillis() - before;
					boolean quiet = before < 0 || compiled < SETTLED_COMPILE_MILLIS;
					settled = (total > this.options.warmup() && quiet) ? settled + 1 : 0;
				}
				System.out.printf(Locale.ROOT,
						"  warm-up %-44s %9.0f requests/s after %d s (JIT: %d ms in the last %d s)%n", gateway.label(),
						result.perSecond(), total, compiled, WARMUP_STEP_SECONDS);
			}
		}

		/**
		 * Every round measures every JVM once, in an order rotated by one each
		 * round; a variant's round is the mean of its JVMs', and it reports its
		 * median round, with the medians over rounds of its ratios within a round.
		 */
		List<Row> rounds() throws InterruptedException {
			List<Instance> instances = new ArrayList<>(this.routes.keySet());
			Map<Variant, List<Row>> measured = new LinkedHashMap<>();
			for (int round = 0; round < this.options.rounds(); round++) {
				Map<Variant, List<Row>> thisRound = new LinkedHashMap<>();
				for (int i = 0; i < instances.size(); i++) {
					Instance instance = instances.get((i + round) % instances.size());
					thisRound.computeIfAbsent(instance.variant(), (v) -> new ArrayList<>()).add(measure(instance));
				}
				thisRound.forEach((variant, rows) -> measured.computeIfAbsent(variant, (v) -> new ArrayList<>())
					.add(Row.mean(rows)));
			}
			List<Row> medians = new ArrayList<>();
			for (Variant variant : this.options.variants()) {
				List<Row> all = measured.get(variant);
				double versusPlain = (variant != Variant.PLAIN) ? medianRatio(all, measured.get(Variant.PLAIN))
						: Double.NaN;
				double versusRedisRateLimiter = (variant == Variant.REDIS)
						? medianRatio(all, measured.get(Variant.REDIS_RATE_LIMITER)) : Double.NaN;
				List<Row> sorted = new ArrayList<>(all);
				sorted.sort(Comparator.comparingDouble(Row::requestsPerSecond));
				medians.add(sorted.get(sorted.size() / 2).withRatios(versusPlain, versusRedisRateLimiter));
			}
			return medians;
		}

		/** The median over rounds of {@code rows}' throughput over {@code baseline}'s in the same round; NaN without. */
		private static double medianRatio(List<Row> rows, List<Row> baseline) {
			if (baseline == null) {
				return Double.NaN;
			}
			List<Double> ratios = new ArrayList<>();
			for (int round = 0; round < rows.size(); round++) {
				ratios.add(rows.get(round).requestsPerSecond() / baseline.get(round).requestsPerSecond());
			}
			return Figures.median(ratios);
		}

		private Row measure(Instance instance) throws InterruptedException {
			Variant variant = instance.variant();
			SampleAppProcess app = this.routes.get(instance).app();
			ServerProbe probe = this.routes.get(instance).probe();
			try {
				if (this.redis != null) {
					this.redis.call("CONFIG", "RESETSTAT");
				}
				long decisionsBefore = probe.decisions();
				Map<Long, Long> cpuBefore = probe.cpuNanos();
				long started = System.nanoTime();
				// A second of closed loop to ramp up, not recorded; the counts include it.
				LoadGenerator.Result result = LoadGenerator.run("127.0.0.1", app.port(), variant.path,
						this.options.connections(), 1, Duration.ofSeconds(1),
						Duration.ofSeconds(this.options.seconds()));
				double wallNanos = System.nanoTime() - started;
				double cpuNanos = ServerProbe.cpuNanosBetween(cpuBefore, probe.cpuNanos());
				long decisions = probe.decisions() - decisionsBefore;
				checkStatus(instance, result);
				String scripts = checkDecisions(variant, decisions, result.allRequests(), this.redis);
				Row row = new Row(variant.label, result.perSecond(), result.percentileMicros(0.50),
						result.percentileMicros(0.99), result.percentileMicros(0.999), result.requests(),
						cpuNanos / 1e3 / result.allRequests(), cpuNanos / wallNanos, Double.NaN, Double.NaN);
				System.out.printf(Locale.ROOT,
						"  %-22s %9.0f requests/s  p50 %7.0f us  p99 %7.0f us  gateway CPU %6.1f us/request "
								+ "(%3.0f%% of a CPU)%s%n",
						instance.label(), row.requestsPerSecond(), row.p50Micros(), row.p99Micros(),
						row.cpuMicrosPerRequest(), 100 * row.serverCpuShare(), scripts);
				return row;
			}
			catch (IllegalStateException ex) {
				throw new IllegalStateException(ex.getMessage() + app.logTail(), ex);
			}
		}

		@Override
		public void close() {
			this.jvms.forEach((gateway) -> {
				gateway.probe().close();
				gateway.app().close();
			});
		}

	}

	/** The first answer shows which limiter the route runs: the starter's fields, the gateway's, or none. */
	private static void checkHeaders(Variant variant, HttpConnection.Response response) {
		String policy = response.header("RateLimit-Policy");
		String remaining = response.header("X-RateLimit-Remaining");
		boolean fits = switch (variant) {
			case PLAIN -> policy == null && remaining == null;
			case MEMORY, REDIS -> policy != null && policy.contains("per-ip") && remaining == null;
			// The gateway's RedisRateLimiter admits with -1 when Redis failed: a real count proves it asked.
			case REDIS_RATE_LIMITER -> policy == null && remaining != null && Long.parseLong(remaining) >= 0;
		};
		if (!fits) {
			throw new IllegalStateException(variant.label + ": " + variant.path
					+ " answered with other limiter header fields than the route claims: " + response.headers());
		}
	}

	private static void checkStatus(Instance instance, LoadGenerator.Result result) {
		if (result.non2xx() > 0) {
			throw new IllegalStateException(String.format(Locale.ROOT,
					"%s: %d of %d answers were not 2xx (first: %d); the limits must admit everything", instance.label(),
					result.non2xx(), result.allRequests(), result.firstNon2xx()));
		}
	}

	/**
	 * The starter decided every request of its variants and none of the others;
	 * on Redis scripts ran for the limiters on Redis (the gateway's own one per
	 * request, ours at most one: fewer when decisions are coalesced), and none
	 * for the others.
	 * @return a note for the progress line
	 */
	private static String checkDecisions(Variant variant, long decisions, long requests, RedisServerProcess redis) {
		if (decisions != (variant.ours() ? requests : 0)) {
			throw new IllegalStateException(String.format(Locale.ROOT,
					"%s: %d allowed decisions of per-ip (rate.limit.decisions) for %d requests; "
							+ "the route is not what it claims",
					variant.label, decisions, requests));
		}
		if (redis == null) {
			return "";
		}
		long scripts = redis.scripts();
		boolean fits = variant.redis ? (variant.ours() ? scripts > 0 && scripts <= requests : scripts >= requests)
				: scripts == 0;
		if (!fits) {
			throw new IllegalStateException(String.format(Locale.ROOT,
					"%s: %d Redis scripts for %d requests; the route is not what it claims", variant.label, scripts,
					requests));
		}
		return String.format(Locale.ROOT, ", Redis scripts %.2f per request", scripts / (double) requests);
	}

	/**
	 * Checks the goals against a run's rows.
	 * @param rows what {@link #run(Settings)} returned
	 * @return the goals whose figures the run has
	 */
	public static List<HttpBenchmark.GoalCheck> goals(List<Row> rows) {
		List<HttpBenchmark.GoalCheck> goals = new ArrayList<>();
		Row memory = find(rows, Variant.MEMORY);
		if (memory != null && !Double.isNaN(memory.versusPlain())) {
			goals.add(new HttpBenchmark.GoalCheck(
					"Gateway: saturated throughput, RateLimit filter on memory against the plain route (pinned)",
					String.format(Locale.ROOT, "≥ %.1f×", GOAL_MEMORY_RATIO),
					String.format(Locale.ROOT, "%.2f×", memory.versusPlain()),
					memory.versusPlain() >= GOAL_MEMORY_RATIO));
		}
		Row redis = find(rows, Variant.REDIS);
		if (redis != null && !Double.isNaN(redis.versusRedisRateLimiter())) {
			goals.add(new HttpBenchmark.GoalCheck(
					"Gateway: saturated throughput, RateLimit filter on Redis against the gateway's RedisRateLimiter",
					String.format(Locale.ROOT, "≥ %.1f×", GOAL_REDIS_RATIO),
					String.format(Locale.ROOT, "%.2f×", redis.versusRedisRateLimiter()),
					redis.versusRedisRateLimiter() >= GOAL_REDIS_RATIO));
		}
		return goals;
	}

	private static Row find(List<Row> rows, Variant variant) {
		return rows.stream().filter((r) -> r.variant().equals(variant.label)).findFirst().orElse(null);
	}

	/**
	 * The rows as a Markdown table, with the notes that say how they were taken.
	 * @param rows what {@link #run(Settings)} returned
	 * @param options the run's settings
	 * @return the table and its notes, ending with a newline
	 */
	public static String table(List<Row> rows, Settings options) {
		StringBuilder out = new StringBuilder();
		out.append(String.format(Locale.ROOT,
				"**Gateway: saturated throughput through one route** (closed loop, %d connections, every request "
						+ "admitted)%n%n",
				options.connections()));
		out.append("| Route | Requests/s | × plain route | × RedisRateLimiter | p50 µs | p99 µs | p99.9 µs "
				+ "| Gateway CPU µs/request | Gateway CPU busy |\n");
		out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
		for (Row r : rows) {
			out.append(String.format(Locale.ROOT, "| %s | %,.0f | %s | %s | %,.0f | %,.0f | %,.0f | %.1f | %.0f%% |%n",
					r.variant(), r.requestsPerSecond(), ratio(r.versusPlain()), ratio(r.versusRedisRateLimiter()),
					r.p50Micros(), r.p99Micros(), r.p999Micros(), r.cpuMicrosPerRequest(), 100 * r.serverCpuShare()));
		}
		out.append('\n');
		out.append(String.format(Locale.ROOT,
				"The gateway sample (Spring Cloud Gateway server WebFlux) in front of a Reactor Netty backend; "
						+ "`RateLimit=per-ip` and `RedisRateLimiter` with limits of 10^9 (token buckets, one key: the "
						+ "client address). The routes of a configuration share %d gateway JVM(s) (%s): the plain route "
						+ "and the filter on memory, and the two limiters on Redis; all warmed up, their routes in turn "
						+ "(at least %d s, then until the JIT settles), then %d rounds of %d s measuring each route in turn; "
						+ "each row is its route's median round, each ratio the median over rounds of the ratio within "
						+ "a round. Pinning: %s. Every answer 2xx; the starter decided every request of its routes and none of "
						+ "the others (counted); on Redis, a script per request where a limiter decides, none "
						+ "elsewhere (`INFO commandstats`). Command: `%s`.%n",
				options.jvms(), String.join(" ", options.jvmOptions()), options.warmup(), options.rounds(),
				options.seconds(), CpuPinning.of(options.pin()).describe(), options.command()));
		return out.toString();
	}

	private static String ratio(double ratio) {
		return Double.isNaN(ratio) ? "" : String.format(Locale.ROOT, "%.2f", ratio);
	}

}
