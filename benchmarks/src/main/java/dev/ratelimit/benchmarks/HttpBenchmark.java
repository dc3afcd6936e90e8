package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
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
import java.util.stream.Stream;

/**
 * What the limiter costs an HTTP request: the sample app's {@code GET /api/hello}
 * with the limiter on (route rule {@code /api/** -> per-ip}, its capacity and
 * rate raised so high that every request is admitted) against the same app
 * without it, measured three ways ({@code --modes}):
 * <ul>
 * <li>{@code cpu}: the server process's CPU time per request (user plus system,
 * every live thread, in nanoseconds from each thread's {@code schedstat}) and the bytes its threads
 * allocated per request, at a fixed request rate (open loop), limiter on
 * against {@code rate-limit.enabled=false}, memory backend;</li>
 * <li>{@code saturated}: requests per second of a closed loop that keeps the
 * server busy, with the server and the load generator pinned to different CPUs
 * ({@link CpuPinning}), memory backend;</li>
 * <li>{@code redis}: the same on the Redis backend at 16 and 64 connections,
 * against the same app doing one plain {@code INCR} per request through the
 * limiter's own connection factory instead (the sample app's
 * {@code sample.benchmark.redis-incr-floor}, route rules removed): the floor of
 * one round trip.</li>
 * </ul>
 * Each variant runs in JVMs of its own ({@link SampleAppProcess}; two by
 * default, started in mirrored order), all started before measuring and warmed
 * up; then each round measures every JVM in turn, so that a change in the
 * machine's load hits all of them alike, and a variant reports its median
 * round. {@code --before-jar} adds the limiter of
 * another build of the sample app (the code before a change) to the memory
 * variants. {@code --ablations} adds limiter variants (measured in the {@code cpu}
 * mode only) with
 * parts of the limiter turned off by properties, {@code label=--a=1 --b=2|label=...}
 * (e.g. {@code no headers=--rate-limit.headers.mode=none}), to tell what each
 * part costs; they must still decide every request.
 * <p>
 * The benchmark counts decisions and fails otherwise: with the limiter every
 * request of a measured period must have been decided (the app's
 * {@code rate.limit.decisions} metric, allowed, grew by exactly the requests),
 * and on Redis must have run a script; without it, none was decided, and the
 * floor ran exactly one {@code INCR} per request ({@code INFO commandstats}).
 * Any non-2xx response fails the run too.
 * <p>
 * {@code --stack reactive} measures the WebFlux sample ({@code sample-reactive-app}, Reactor Netty)
 * the same way instead of the servlet one ({@link WebStack}): the same endpoint, route rule,
 * metric and floor, from the same harness.
 * <p>
 * Run: {@code java -cp benchmarks/target/benchmarks.jar dev.ratelimit.benchmarks.HttpBenchmark
 * [--stack servlet|reactive] [--modes cpu,saturated,redis] [--seconds 3] [--warmup 15] [--rounds 10] [--jvms 2] [--rate 3000] [--connections 16]
 * [--redis-connections 16,64] [--client-ips 1] [--pin auto] [--app-jar path] [--before-jar path] [--ablations label=args|...] [--jfr dir] [--max-warmup 180]
 * [--jvm "-Xms512m -Xmx512m -XX:+UseG1GC -XX:CICompilerCount=8 -XX:-UseDynamicNumberOfCompilerThreads"]}. Other code calls {@link #run(Settings)}.
 */
public final class HttpBenchmark {

	/** The endpoint measured: a plain controller returning {@code {"message":"hello"}}. */
	static final String PATH = "/api/hello";

	/** Effectively unlimited, as in the other benchmarks: 10^9 tokens, refilled at 10^9 per second. */
	private static final String CAPACITY = "1000000000";

	/** Goal: with the limiter, at least this fraction of the saturated throughput without it (memory). */
	public static final double GOAL_RATIO = 0.9;

	/** Goal: the limiter adds at most this much server CPU time per request, in microseconds (memory). */
	public static final double GOAL_CPU_MICROS = 3;

	/** Goal: on Redis, at least this fraction of the throughput of one INCR per request. */
	public static final double GOAL_REDIS_RATIO = 0.85;

	/** Variant names. */
	static final String ON = "limiter";

	static final String OFF = "no limiter";

	static final String BEFORE = "limiter, before";

	static final String FLOOR = "one INCR, no limiter";

	/** The prefix of an ablation's variant name. */
	static final String ABLATION = "limiter without ";

	/** The ablation that records no decision in traces ({@code rate-limit.observations.enabled=false}). */
	static final String NO_TRACES = "traces";

	/** Issue 31's goal for traces: what recording the decision on the request's observation adds, in CPU. */
	public static final double GOAL_TRACES_MICROS = 1;

	/** And in bytes allocated per request. */
	public static final double GOAL_TRACES_BYTES = 256;

	/** Whether the limiter decides the variant's requests. */
	static boolean decides(String variant) {
		return variant.equals(ON) || variant.equals(BEFORE) || variant.startsWith(ABLATION);
	}

	private HttpBenchmark() {
	}

	/**
	 * What to run.
	 *
	 * @param modes {@code cpu}, {@code saturated} and/or {@code redis}
	 * @param seconds measured seconds per variant and round
	 * @param warmup warm-up seconds per variant, before the first round (closed loop)
	 * @param rounds how many times every variant is measured, in turn; each reports its median round
	 * @param rate requests per second of the {@code cpu} mode (open loop)
	 * @param connections concurrent keep-alive connections of the {@code saturated} mode (and of the
	 * {@code cpu} mode's open loop), one load thread each
	 * @param redisConnections the connection counts of the {@code redis} mode
	 * @param clientIps distinct client addresses: 1 is the loopback peer alone (one hot key for
	 * {@code per-ip}); more are sent in {@code X-Forwarded-For}, with 127.0.0.1 a trusted proxy
	 * @param pin {@code auto}, {@code none} or {@code SERVER/CLIENT} CPU lists (see {@link CpuPinning#of})
	 * @param appJar the sample app's executable jar, or {@code null} to look in the stack's module's
	 * {@code target} ({@code sample-app/target} or {@code sample-reactive-app/target})
	 * @param beforeJar another build of the sample app whose limiter is measured too, or {@code null}
	 * @param ablations more limiter variants of the {@code cpu} mode, by label: extra arguments of the app
	 * @param jvms server JVMs per variant, started in mirrored order (A B B A): see {@link Servers#start}
	 * @param jfrDirectory where each server JVM writes a JFR recording (profile settings), or {@code null}
	 * @param jvmOptions the sample app JVM's options, the same for every variant
	 * @param stack which sample is measured: the servlet one or the reactive one
	 * @param maxWarmup the longest warm-up per JVM, in seconds, however busy its JIT still is
	 */
	public record Settings(List<String> modes, int seconds, int warmup, int rounds, int rate, int connections,
			List<Integer> redisConnections, int clientIps, String pin, String appJar, String beforeJar,
			Map<String, List<String>> ablations, int jvms, String jfrDirectory, List<String> jvmOptions,
			WebStack stack, int maxWarmup) {

		/**
		 * The longest warm-up per server JVM, in seconds, by default: on a busy
		 * 2-core machine a JVM's JIT settles after 40 to 60 s with {@link #WARMED_JVM}'s
		 * compiler threads (55 to 100 s without).
		 */
		public static final int DEFAULT_MAX_WARMUP = 180;

		/**
		 * Fixed heap (so no case pays for growing it) and G1 named explicitly, because the JVM
		 * falls back to the serial collector on a machine it does not consider a server
		 * (fewer than 2 CPUs, as a server pinned to one is, or less than 1792 MB), which would
		 * change what is measured.
		 */
		public static final List<String> DEFAULT_JVM = List.of("-Xms512m", "-Xmx512m", "-XX:+UseG1GC");

		/**
		 * The options of a server JVM that is warmed up and then measured: {@link #DEFAULT_JVM}
		 * and eight compiler threads that stay. Pinned to one CPU, a JVM starts one C1 and one
		 * C2 thread, which the scheduler gives a share of that CPU like any one of the busy
		 * request threads: C2 worked through its queue at a fifth of the CPU, and the JIT took
		 * 55 to 100 s to settle (40 to 60 s with eight, most of its queue done in the first 20 s).
		 * Once it settles they sit idle, so a round
		 * measures the same code (the JIT threads' CPU is in the tables). Dynamic compiler
		 * threads off, because a thread that exits takes its CPU time with it, and the warm-up
		 * reads the compiler threads' CPU time ({@link ServerProbe#compileMillis}).
		 */
		public static final List<String> WARMED_JVM = Stream
			.concat(DEFAULT_JVM.stream(), Stream.of("-XX:CICompilerCount=8", "-XX:-UseDynamicNumberOfCompilerThreads"))
			.toList();

		/**
		 * About 15 minutes in all on two cores: two JVMs per variant, and many
		 * short rounds, so that each variant is measured within seconds of the one
		 * it is compared with, and a slow spell of the machine spoils a few pairs,
		 * not a third of the run.
		 */
		public static Settings defaults() {
			return new Settings(List.of("cpu", "saturated", "redis"), 3, 15, 10, 3000, 16, List.of(16, 64), 1, "auto",
					null, null, Map.of(), 2, null, WARMED_JVM, WebStack.SERVLET, DEFAULT_MAX_WARMUP);
		}

		/**
		 * Reads the options of the class comment; the rest keep their defaults.
		 * {@code --cases memory,redis} (the earlier option) still works: {@code memory}
		 * is {@code cpu,saturated}.
		 * @param given the parsed command line
		 * @return the settings
		 */
		static Settings from(Options given) {
			Settings d = defaults();
			List<String> modes = new ArrayList<>();
			String cases = given.string("cases", null);
			for (String mode : (cases != null) ? List.of(cases.split(","))
					: given.list("modes", String.join(",", d.modes()))) {
				switch (mode) {
					case "cpu", "saturated", "redis" -> modes.add(mode);
					case "memory" -> modes.addAll(List.of("cpu", "saturated"));
					default -> throw new IllegalArgumentException(
							"--modes takes cpu, saturated and/or redis, got " + mode);
				}
			}
			String jvm = given.string("jvm", null);
			return new Settings(modes, given.integer("seconds", d.seconds()), given.integer("warmup", d.warmup()),
					given.integer("rounds", d.rounds()), given.integer("rate", d.rate()),
					given.integer("connections", d.connections()),
					given.list("redis-connections", "16,64").stream().map(Integer::valueOf).toList(),
					given.integer("client-ips", d.clientIps()), given.string("pin", d.pin()),
					given.string("app-jar", null), given.string("before-jar", null),
					parseAblations(given.string("ablations", null)), given.integer("jvms", d.jvms()),
					given.string("jfr", null),
					(jvm != null) ? List.of(jvm.trim().split("\\s+")) : d.jvmOptions(),
					WebStack.of(given.string("stack", d.stack().option())),
					given.integer("max-warmup", d.maxWarmup()));
		}

	}

	/** {@code label=--a=1 --b=2|label=...}, in order; empty for {@code null}. */
	private static Map<String, List<String>> parseAblations(String option) {
		Map<String, List<String>> ablations = new LinkedHashMap<>();
		if (option != null) {
			for (String ablation : option.split("\\|")) {
				int equals = ablation.indexOf('=');
				if (equals <= 0) {
					throw new IllegalArgumentException("--ablations takes label=arguments|..., got " + ablation);
				}
				ablations.put(ablation.substring(0, equals).trim(),
						List.of(ablation.substring(equals + 1).trim().split("\\s+")));
			}
		}
		return ablations;
	}

	/**
	 * One variant's median round in one mode.
	 *
	 * @param mode {@code cpu}, {@code saturated} or {@code redis}
	 * @param backend {@code memory} or {@code redis}
	 * @param variant {@value #ON}, {@value #OFF}, {@value #BEFORE} or {@value #FLOOR}
	 * @param connections the load's connections
	 * @param requestsPerSecond measured requests per second (in {@code cpu} mode: the rate reached)
	 * @param p50Micros median latency in microseconds (open loop: from each request's due time)
	 * @param p99Micros 99th percentile latency in microseconds
	 * @param p999Micros 99.9th percentile latency in microseconds
	 * @param requests requests in the measured period
	 * @param cpuMicrosPerRequest server CPU time per request, in microseconds
	 * @param bytesPerRequest bytes the server's threads allocated per request; NaN when unknown
	 * @param serverCpuShare server CPU time over wall time in the measured round (1.0 is one CPU busy)
	 * @param cpuAddedMicros in {@code cpu} mode, the median over rounds of this variant's CPU time per
	 * request minus {@value #OFF}'s in the same round; NaN otherwise
	 * @param bytesAdded the same for bytes allocated per request
	 * @param ratio with the limiter ({@value #ON}), its throughput over the variant without it
	 * ({@value #OFF}, or {@value #FLOOR} on Redis) in {@code saturated} and {@code redis} modes; NaN otherwise
	 * @param threadMicros server CPU time per request in microseconds by thread group
	 * ({@link ServerProbe#THREAD_GROUPS}); empty when unknown
	 * @param threadAdded each group's median over rounds of this variant's CPU time per request minus that of
	 * the variant it is compared with ({@value #OFF}, or {@value #FLOOR} on Redis) in the same round; empty for
	 * that variant itself
	 */
	public record Row(String mode, String backend, String variant, int connections, double requestsPerSecond,
			double p50Micros, double p99Micros, double p999Micros, long requests, double cpuMicrosPerRequest,
			double bytesPerRequest, double serverCpuShare, double cpuAddedMicros, double bytesAdded, double ratio,
			Map<String, Double> threadMicros, Map<String, Double> threadAdded) {

		/** @return whether the limiter decided this variant's requests */
		public boolean limiter() {
			return decides(this.variant);
		}

		Row withRatio(double ratio) {
			return new Row(this.mode, this.backend, this.variant, this.connections, this.requestsPerSecond,
					this.p50Micros, this.p99Micros, this.p999Micros, this.requests, this.cpuMicrosPerRequest,
					this.bytesPerRequest, this.serverCpuShare, this.cpuAddedMicros, this.bytesAdded, ratio,
					this.threadMicros, this.threadAdded);
		}

		/**
		 * One variant's round over its JVMs: the mean of each figure (requests
		 * summed), so that no JVM's place in the start order decides the variant's.
		 */
		static Row mean(List<Row> rows) {
			if (rows.size() == 1) {
				return rows.get(0);
			}
			Row first = rows.get(0);
			Map<String, Double> threads = new LinkedHashMap<>();
			if (rows.stream().noneMatch((r) -> r.threadMicros().isEmpty())) {
				first.threadMicros().keySet()
					.forEach((group) -> threads.put(group,
							rows.stream().mapToDouble((r) -> r.threadMicros().get(group)).average().orElseThrow()));
			}
			return new Row(first.mode, first.backend, first.variant, first.connections,
					average(rows, Row::requestsPerSecond), average(rows, Row::p50Micros), average(rows, Row::p99Micros),
					average(rows, Row::p999Micros), rows.stream().mapToLong(Row::requests).sum(),
					average(rows, Row::cpuMicrosPerRequest), average(rows, Row::bytesPerRequest),
					average(rows, Row::serverCpuShare), Double.NaN, Double.NaN, Double.NaN, threads, Map.of());
		}

		private static double average(List<Row> rows, ToDoubleFunction<Row> figure) {
			return rows.stream().mapToDouble(figure).average().orElseThrow();
		}

		Row withAdded(double cpuAddedMicros, double bytesAdded, Map<String, Double> threadAdded) {
			return new Row(this.mode, this.backend, this.variant, this.connections, this.requestsPerSecond,
					this.p50Micros, this.p99Micros, this.p999Micros, this.requests, this.cpuMicrosPerRequest,
					this.bytesPerRequest, this.serverCpuShare, cpuAddedMicros, bytesAdded, this.ratio,
					this.threadMicros, threadAdded);
		}

	}

	/**
	 * A goal of issue 16 and whether this run met it.
	 *
	 * @param name what is measured
	 * @param target the goal
	 * @param measured the figures
	 * @param met whether every figure meets it
	 */
	public record GoalCheck(String name, String target, String measured, boolean met) {
	}

	public static void main(String[] args) throws Exception {
		Settings options = Settings.from(Options.parse(args));
		List<Row> rows = run(options);
		System.out.println();
		System.out.print(table(rows, options));
		System.out.println();
		for (GoalCheck goal : goals(rows, options.stack())) {
			System.out.printf(Locale.ROOT, "Goal: %s %s: %s (%s)%n", goal.name(), goal.target(),
					goal.met() ? "met" : "NOT met", goal.measured());
		}
	}

	/**
	 * Runs every mode of {@code options}, printing a line per variant and round.
	 * @param options what to run
	 * @return the median row of every variant in every mode
	 * @throws IllegalStateException if a response was not 2xx, a connection failed, or
	 * the decisions counted do not match the requests
	 */
	public static List<Row> run(Settings options) throws InterruptedException {
		Path jar = SampleAppProcess.locateJar(options.appJar(), options.stack().module());
		CpuPinning pinning = CpuPinning.of(options.pin());
		System.out.printf(Locale.ROOT,
				"%s on %s (%s stack); modes %s; %ds warm-up, %d rounds of %ds; %d connections (redis: %s); %d/s in cpu mode; "
						+ "%d client IPs; server JVM %s; %s%n",
				PATH, jar, options.stack().option(), options.modes(), options.warmup(), options.rounds(), options.seconds(),
				options.connections(), options.redisConnections(), options.rate(), options.clientIps(),
				options.jvmOptions(), pinning.describe());
		long self = ProcessHandle.current().pid();
		String unpinned = pinning.pinToClient(self);
		try {
			List<Row> rows = new ArrayList<>();
			if (options.modes().contains("cpu") || options.modes().contains("saturated")) {
				rows.addAll(memory(jar, pinning, options));
			}
			if (options.modes().contains("redis")) {
				try (RedisServerProcess redis = RedisServerProcess.start()) {
					pinning.pinToClient(redis.pid());
					System.out.printf(Locale.ROOT, "redis-server %s on port %d%n", redis.version(), redis.port());
					rows.addAll(redis(jar, redis, pinning, options));
				}
			}
			return rows;
		}
		finally {
			CpuPinning.restore(self, unpinned);
		}
	}

	private static List<Row> memory(Path jar, CpuPinning pinning, Settings options) throws InterruptedException {
		List<Variant> variants = new ArrayList<>();
		variants.add(new Variant("memory", ON, jar, memoryArguments(true, options)));
		variants.add(new Variant("memory", OFF, jar, memoryArguments(false, options)));
		if (options.beforeJar() != null) {
			variants.add(new Variant("memory", BEFORE, SampleAppProcess.locateJar(options.beforeJar(), options.stack().module()),
					memoryArguments(true, options)));
		}
		options.ablations().forEach((label, extra) -> {
			List<String> arguments = new ArrayList<>(memoryArguments(true, options));
			arguments.addAll(extra);
			variants.add(new Variant("memory", ABLATION + label, jar, arguments));
		});
		List<Row> rows = new ArrayList<>();
		try (Servers servers = Servers.start(variants, pinning, options)) {
			servers.warmUp(options.connections(), options.warmup());
			if (options.modes().contains("cpu")) {
				rows.addAll(servers.rounds("cpu", options.connections(), options, null));
			}
			if (options.modes().contains("saturated")) {
				rows.addAll(servers.rounds("saturated", options.connections(), options, null));
			}
		}
		return rows;
	}

	private static List<Row> redis(Path jar, RedisServerProcess redis, CpuPinning pinning, Settings options)
			throws InterruptedException {
		List<String> common = new ArrayList<>(commonArguments(options));
		common.add("--rate-limit.backend=redis");
		common.add("--spring.data.redis.host=127.0.0.1");
		common.add("--spring.data.redis.port=" + redis.port());
		// Every decision must go to Redis: a Redis silent for the default 250 ms (which a saturated
		// benchmark machine can see now and then) would let the failure mode decide requests without
		// asking it, flattering the limiter.
		common.add("--rate-limit.redis.timeout=5s");
		// A call waits the busy timeout in all, of which Redis may stay silent the timeout: at least as long.
		common.add("--rate-limit.redis.busy-timeout=5s");
		List<String> on = new ArrayList<>(common);
		on.add("--rate-limit.enabled=true");
		List<String> floor = new ArrayList<>(common);
		// The limiter stays on, so its connection factory exists, but no route rule decides:
		// one INCR per request through that factory instead.
		floor.add("--rate-limit.enabled=true");
		floor.add("--rate-limit.routes=");
		floor.add("--sample.benchmark.redis-incr-floor=true");
		redis.call("FLUSHALL");
		List<Variant> variants = new ArrayList<>(
				List.of(new Variant("redis", ON, jar, on), new Variant("redis", FLOOR, jar, floor)));
		options.ablations().forEach((label, extra) -> {
			List<String> arguments = new ArrayList<>(on);
			arguments.addAll(extra);
			variants.add(new Variant("redis", ABLATION + label, jar, arguments));
		});
		List<Row> rows = new ArrayList<>();
		try (Servers servers = Servers.start(variants, pinning, options)) {
			int most = options.redisConnections().stream().mapToInt(Integer::intValue).max().orElse(16);
			servers.warmUp(most, options.warmup());
			for (int connections : options.redisConnections()) {
				rows.addAll(servers.rounds("redis", connections, options, redis));
			}
		}
		return rows;
	}

	private static void createDirectories(Path directory) {
		try {
			Files.createDirectories(directory);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot create the JFR directory " + directory, ex);
		}
	}

	private static List<String> memoryArguments(boolean limiter, Settings options) {
		List<String> arguments = new ArrayList<>(commonArguments(options));
		arguments.add("--rate-limit.enabled=" + limiter);
		arguments.add("--rate-limit.backend=memory");
		return arguments;
	}

	private static List<String> commonArguments(Settings options) {
		List<String> arguments = new ArrayList<>(List.of("--rate-limit.policies.per-ip.capacity=" + CAPACITY,
				"--rate-limit.policies.per-ip.refill=" + CAPACITY + "/1s"));
		// Connections kept open for the whole run (see WebStack).
		arguments.addAll(options.stack().serverArguments());
		if (options.clientIps() > 1) {
			// The load generator is the proxy: believe the client address it sends.
			arguments.add("--rate-limit.client-ip.trusted-proxies=127.0.0.1");
		}
		return arguments;
	}

	/**
	 * One server JVM of a variant: the variant's {@code number}-th, counting from 0.
	 */
	private record Instance(Variant variant, int number) {

		String label() {
			return (this.number == 0) ? this.variant.name() : this.variant.name() + " #" + (this.number + 1);
		}

		String fileName() {
			return (this.number == 0) ? this.variant.fileName() : this.variant.fileName() + "-" + (this.number + 1);
		}

	}

	/**
	 * One server configuration: which jar, with which arguments.
	 */
	private record Variant(String backend, String name, Path jar, List<String> arguments) {

		String fileName() {
			return (this.backend + "-" + this.name).replaceAll("[^A-Za-z0-9]+", "-");
		}

	}

	/**
	 * The running servers of one backend's variants, each with its probe.
	 */
	private static final class Servers implements AutoCloseable {

		private static final int WARMUP_STEP_SECONDS = 5;

		private static final int SETTLED_COMPILE_MILLIS = 50;

		private final Map<Instance, SampleAppProcess> apps = new LinkedHashMap<>();

		private final Map<Instance, ServerProbe> probes = new LinkedHashMap<>();

		private final Settings options;

		private Servers(Settings options) {
			this.options = options;
		}

		/**
		 * Starts {@code options.jvms()} server JVMs per variant, in mirrored order
		 * (A B, then B A, ...). Where a JVM is in the start order changes what it
		 * costs per request: in runs of this benchmark the JVM started first spent
		 * 2–4 µs per request more than a later one running the same jar. Mirrored,
		 * every variant has the same mean position.
		 */
		static Servers start(List<Variant> variants, CpuPinning pinning, Settings options) {
			Servers servers = new Servers(options);
			List<Instance> instances = new ArrayList<>();
			for (int number = 0; number < options.jvms(); number++) {
				List<Variant> order = new ArrayList<>(variants);
				if (number % 2 == 1) {
					Collections.reverse(order);
				}
				for (Variant variant : order) {
					instances.add(new Instance(variant, number));
				}
			}
			if (options.jfrDirectory() != null) {
				// The JVM refuses to start when the recording's directory is missing.
				createDirectories(Path.of(options.jfrDirectory()));
			}
			try {
				for (Instance instance : instances) {
					Variant variant = instance.variant();
					List<String> jvm = new ArrayList<>(options.jvmOptions());
					if (options.jfrDirectory() != null) {
						// Denser samples than the profile settings' 10 ms and 300 allocations/s: a request is ~100 µs.
						// Spring MVC's stacks run deeper than JFR's default 64 frames.
						jvm.add("-XX:FlightRecorderOptions:stackdepth=512");
						jvm.add("-XX:StartFlightRecording=settings=profile,dumponexit=true,"
								+ "jdk.ExecutionSample#period=1ms,jdk.ObjectAllocationSample#throttle=5000/s,filename="
								+ Path.of(options.jfrDirectory(), instance.fileName() + ".jfr").toAbsolutePath());
					}
					SampleAppProcess.Started started = SampleAppProcess.start(pinning,
							variant.jar(), jvm, variant.arguments(), PATH);
					servers.apps.put(instance, started.app());
					checkHeaders(variant, started.firstResponse());
					servers.probes.put(instance, new ServerProbe(started.app().pid(), started.app().port()));
					System.out.printf(Locale.ROOT, "  started  %-7s %-22s in %.1f s%n", variant.backend(),
							instance.label(), started.seconds());
				}
				return servers;
			}
			catch (RuntimeException ex) {
				servers.close();
				throw ex;
			}
		}

		/**
		 * Warms every variant up with a closed loop for at least {@code seconds}, then
		 * on in steps of {@value #WARMUP_STEP_SECONDS} s until the JIT compilers spent
		 * less than {@value #SETTLED_COMPILE_MILLIS} ms of CPU in a step (at most
		 * {@code --max-warmup} s, 180 by default): a server pinned to one busy CPU compiles slowly,
		 * and a round measured while it still compiles measures the compiler. Each
		 * step samples the server as a round does.
		 */
		void warmUp(int connections, int seconds) throws InterruptedException {
			for (Instance instance : this.apps.keySet()) {
				Variant variant = instance.variant();
				ServerProbe probe = this.probes.get(instance);
				int port = this.apps.get(instance).port();
				LoadGenerator.Result result = LoadGenerator.run("127.0.0.1", port, PATH, connections,
						this.options.clientIps(), Duration.ZERO, Duration.ofSeconds(seconds));
				checkStatus(variant, result);
				int total = seconds;
				long compiled = -1;
				while (total < this.options.maxWarmup()) {
					long before = probe.compileMillis();
					// Sampled as a round samples it: the probe's first calls (JMX over RMI, the metrics
					// endpoint) load code in the server whose profiles make C2 throw away and recompile the
					// request path; that belongs to the warm-up, not to the first measured round.
					probe.sample(false);
					result = LoadGenerator.run("127.0.0.1", port, PATH, connections, this.options.clientIps(),
							Duration.ZERO, Duration.ofSeconds(WARMUP_STEP_SECONDS));
					probe.sample(true);
					checkStatus(variant, result);
					total += WARMUP_STEP_SECONDS;
					compiled = probe.compileMillis() - before;
					if (before < 0 || compiled < SETTLED_COMPILE_MILLIS) {
						break;
					}
				}
				System.out.printf(Locale.ROOT, "  warm-up  %-7s %-22s %9.0f requests/s after %d s (JIT: %d ms in the last %d s)%n",
						variant.backend(), instance.label(), result.perSecond(), total, compiled, WARMUP_STEP_SECONDS);
			}
		}

		/**
		 * Every round measures every JVM once, in an order rotated by one each
		 * round; a variant's round is the mean of its JVMs', and each variant keeps
		 * its median round.
		 */
		List<Row> rounds(String mode, int connections, Settings options, RedisServerProcess redis)
				throws InterruptedException {
			String baselineName = (redis != null) ? FLOOR : OFF;
			// An ablation answers what a part of the limiter costs in server CPU: the cpu mode's question.
			List<Instance> instances = this.apps.keySet()
				.stream()
				.filter((instance) -> mode.equals("cpu") || !instance.variant().name().startsWith(ABLATION))
				.toList();
			List<Variant> variants = instances.stream().map(Instance::variant).distinct().toList();
			Map<Variant, List<Row>> measured = new LinkedHashMap<>();
			for (int round = 0; round < options.rounds(); round++) {
				Map<Variant, List<Row>> thisRound = new LinkedHashMap<>();
				for (int i = 0; i < instances.size(); i++) {
					Instance instance = instances.get((i + round) % instances.size());
					Row row = measure(mode, instance, connections, redis);
					thisRound.computeIfAbsent(instance.variant(), (v) -> new ArrayList<>()).add(row);
				}
				thisRound.forEach((variant, rows) -> measured.computeIfAbsent(variant, (v) -> new ArrayList<>())
					.add(Row.mean(rows)));
			}
			List<Row> medians = new ArrayList<>();
			List<Row> baseline = measured.entrySet()
				.stream()
				.filter((e) -> e.getKey().name().equals(baselineName))
				.map(Map.Entry::getValue)
				.findFirst()
				.orElse(null);
			for (Variant variant : variants) {
				List<Row> all = new ArrayList<>(measured.get(variant));
				List<Double> cpuAdded = new ArrayList<>();
				List<Double> bytesAdded = new ArrayList<>();
				List<Double> ratios = new ArrayList<>();
				Map<String, List<Double>> threadsAdded = new LinkedHashMap<>();
				if (baseline != null && !variant.name().equals(baselineName)) {
					// Paired by round: the two were measured within seconds of each other.
					for (int round = 0; round < all.size(); round++) {
						Row row = all.get(round);
						Row base = baseline.get(round);
						cpuAdded.add(row.cpuMicrosPerRequest() - base.cpuMicrosPerRequest());
						bytesAdded.add(row.bytesPerRequest() - base.bytesPerRequest());
						ratios.add(row.requestsPerSecond() / base.requestsPerSecond());
						row.threadMicros().forEach((group, micros) -> {
							if (base.threadMicros().containsKey(group)) {
								threadsAdded.computeIfAbsent(group, (g) -> new ArrayList<>())
									.add(micros - base.threadMicros().get(group));
							}
						});
					}
				}
				// cpu: the median CPU time; otherwise the median throughput.
				all.sort(mode.equals("cpu") ? Comparator.comparingDouble(Row::cpuMicrosPerRequest)
						: Comparator.comparingDouble(Row::requestsPerSecond));
				Row median = all.get(all.size() / 2);
				if (!cpuAdded.isEmpty()) {
					Map<String, Double> threadAdded = new LinkedHashMap<>();
					threadsAdded.forEach((group, added) -> threadAdded.put(group, Figures.median(added)));
					median = median.withAdded(Figures.median(cpuAdded), Figures.median(bytesAdded), threadAdded);
					if (!mode.equals("cpu") && decides(variant.name())) {
						// The throughput ratio, paired by round as well: a slow moment of the machine hits one round.
						median = median.withRatio(Figures.median(ratios));
					}
				}
				medians.add(median);
			}
			return medians;
		}

		private Row measure(String mode, Instance instance, int connections, RedisServerProcess redis)
				throws InterruptedException {
			Variant variant = instance.variant();
			SampleAppProcess app = this.apps.get(instance);
			ServerProbe probe = this.probes.get(instance);
			try {
				if (redis != null) {
					redis.call("CONFIG", "RESETSTAT");
				}
				ServerProbe.Sample before = probe.sample(false);
				long compiledBefore = probe.compileMillis();
				long started = System.nanoTime();
				Duration period = Duration.ofSeconds(this.options.seconds());
				LoadGenerator.Result result = mode.equals("cpu")
						? LoadGenerator.paced("127.0.0.1", app.port(), PATH, connections, this.options.clientIps(),
								this.options.rate(), Duration.ZERO, period)
						// A second of closed loop to ramp up, not recorded; the CPU counts it as requests too.
						: LoadGenerator.run("127.0.0.1", app.port(), PATH, connections, this.options.clientIps(),
								Duration.ofSeconds(1), period);
				double wallNanos = System.nanoTime() - started;
				ServerProbe.Sample after = probe.sample(true);
				long compiled = probe.compileMillis() - compiledBefore;
				checkStatus(variant, result);
				String redisCalls = checkDecisions(variant, after.decisions() - before.decisions(),
						result.allRequests(), redis);
				double cpuNanos = after.cpuNanosSince(before);
				Map<String, Double> threadMicros = new LinkedHashMap<>();
				after.threadNanosSince(before)
					.forEach((group, nanos) -> threadMicros.put(group, nanos / 1e3 / result.allRequests()));
				Row row = new Row(mode, variant.backend(), variant.name(), connections, result.perSecond(),
						result.percentileMicros(0.50), result.percentileMicros(0.99), result.percentileMicros(0.999),
						result.requests(), cpuNanos / 1e3 / result.allRequests(),
						after.allocatedSince(before) / result.allRequests(), cpuNanos / wallNanos, Double.NaN, Double.NaN,
						Double.NaN, threadMicros, Map.of());
				System.out.printf(Locale.ROOT,
						"  %-9s %-6s %-22s %3d conn %9.0f requests/s  p50 %7.0f us  p99 %7.0f us  "
								+ "server CPU %6.1f us/request (%3.0f%% of a CPU; JIT %5d ms), %7.0f B/request%s%s%n",
						mode, variant.backend(), instance.label(), connections, row.requestsPerSecond(),
						row.p50Micros(), row.p99Micros(), row.cpuMicrosPerRequest(), 100 * row.serverCpuShare(),
						compiled, row.bytesPerRequest(), redisCalls, threads(threadMicros));
				return row;
			}
			catch (IllegalStateException ex) {
				// The server's own account (Redis timeouts, a closed silence gate, errors) is in its log.
				throw new IllegalStateException(ex.getMessage() + app.logTail(), ex);
			}
		}

		@Override
		public void close() {
			this.probes.values().forEach(ServerProbe::close);
			this.apps.values().forEach(SampleAppProcess::close);
		}

	}

	/** {@code ; by thread: request threads 60.1, ...} in µs per request, or nothing when unknown. */
	private static String threads(Map<String, Double> threadMicros) {
		if (threadMicros.isEmpty()) {
			return "";
		}
		StringBuilder out = new StringBuilder("; by thread:");
		threadMicros.forEach((group, micros) -> out.append(String.format(Locale.ROOT, " %s %.1f", group, micros)));
		return out.toString();
	}

	/** The limiter's rate-limit header fields prove the filter ran; their absence proves it did not. */
	private static void checkHeaders(Variant variant, HttpConnection.Response response) {
		String policy = response.header("RateLimit-Policy");
		if (variant.name().startsWith(ABLATION)) {
			// It may have turned the headers off; the decisions counted prove it decides.
			return;
		}
		boolean limiter = decides(variant.name());
		if (limiter && (policy == null || !policy.contains("per-ip"))) {
			throw new IllegalStateException(variant.name() + " should decide, but " + PATH
					+ " answered without a per-ip RateLimit-Policy header: " + response.headers());
		}
		if (!limiter && policy != null) {
			throw new IllegalStateException(variant.name() + " should not decide, but " + PATH
					+ " answered RateLimit-Policy: " + policy);
		}
	}

	private static void checkStatus(Variant variant, LoadGenerator.Result result) {
		if (result.non2xx() > 0) {
			throw new IllegalStateException(String.format(Locale.ROOT,
					"%s, %s: %d of %d responses were not 2xx (first: %d); the limits must admit everything",
					variant.backend(), variant.name(), result.non2xx(), result.allRequests(), result.firstNon2xx()));
		}
	}

	/**
	 * Every request decided with the limiter, none without; on Redis at least one
	 * script and at most one per decision (EVAL, EVALSHA or FCALL, from
	 * {@code INFO commandstats}, reset right before the load: fewer when
	 * decisions are coalesced), and for the floor exactly one INCR per request.
	 * @return a note for the progress line
	 */
	private static String checkDecisions(Variant variant, long decisions, long requests, RedisServerProcess redis) {
		boolean limiter = decides(variant.name());
		if (decisions != (limiter ? requests : 0)) {
			throw new IllegalStateException(String.format(Locale.ROOT,
					"%s, %s: %d allowed decisions of per-ip (rate.limit.decisions) for %d requests; "
							+ "the variant is not what it claims",
					variant.backend(), variant.name(), decisions, requests));
		}
		if (redis == null) {
			return "";
		}
		long scripts = redis.scripts();
		long incr = redis.calls("incr");
		// Coalesced decisions share calls; every decision was counted by the app above, on Redis as there is no
		// prefetch or deny cache in the way of an admitted request.
		boolean fits = limiter ? (scripts > 0 && scripts <= requests) : (scripts == 0 && incr == requests);
		if (!fits) {
			throw new IllegalStateException(String.format(Locale.ROOT,
					"redis, %s: %d scripts and %d INCR for %d requests; the variant is not what it claims",
					variant.name(), scripts, incr, requests));
		}
		return String.format(Locale.ROOT, ", Redis scripts %.2f INCR %.2f per request", scripts / (double) requests,
				incr / (double) requests);
	}

	/**
	 * Checks the goals against the rows of a run.
	 * @param rows what {@link #run(Settings)} returned
	 * @return the goals whose figures the run has
	 */
	public static List<GoalCheck> goals(List<Row> rows) {
		return goals(rows, WebStack.SERVLET);
	}

	/**
	 * Checks the goals against the rows of a run of one stack; the goals of the
	 * reactive stack are named {@code HTTP (WebFlux)}.
	 * @param rows what {@link #run(Settings)} returned
	 * @param stack the stack those rows measured
	 * @return the goals whose figures the run has
	 */
	public static List<GoalCheck> goals(List<Row> rows, WebStack stack) {
		String http = stack.goalPrefix();
		List<GoalCheck> goals = new ArrayList<>();
		Row on = find(rows, "cpu", ON, -1);
		Row off = find(rows, "cpu", OFF, -1);
		if (on != null && off != null && !Double.isNaN(on.cpuAddedMicros())) {
			double extra = on.cpuAddedMicros();
			goals.add(new GoalCheck(http + ": server CPU the limiter adds per request (memory backend, fixed rate)",
					String.format(Locale.ROOT, "≤ %.0f µs", GOAL_CPU_MICROS),
					String.format(Locale.ROOT, "%+.1f µs (median of rounds; %.1f against %.1f µs per request at %,.0f/s)", extra,
							on.cpuMicrosPerRequest(), off.cpuMicrosPerRequest(), on.requestsPerSecond()),
					extra <= GOAL_CPU_MICROS));
		}
		Row untraced = find(rows, "cpu", ABLATION + NO_TRACES, -1);
		if (on != null && untraced != null && !Double.isNaN(on.cpuAddedMicros())
				&& !Double.isNaN(untraced.cpuAddedMicros())) {
			// Both are medians of within-round differences from the same variant without the limiter.
			double micros = on.cpuAddedMicros() - untraced.cpuAddedMicros();
			double bytes = on.bytesAdded() - untraced.bytesAdded();
			goals.add(new GoalCheck(http + ": what recording decisions in traces adds per request (the limiter "
					+ "against rate-limit.observations.enabled=false, fixed rate)",
					String.format(Locale.ROOT, "≤ %.0f µs and ≤ %.0f B", GOAL_TRACES_MICROS, GOAL_TRACES_BYTES),
					String.format(Locale.ROOT, "%+.1f µs, %+.0f B (limiter %+.1f µs, without traces %+.1f µs)", micros,
							bytes, on.cpuAddedMicros(), untraced.cpuAddedMicros()),
					micros <= GOAL_TRACES_MICROS && bytes <= GOAL_TRACES_BYTES));
		}
		Row saturated = find(rows, "saturated", ON, -1);
		if (saturated != null && !Double.isNaN(saturated.ratio())) {
			goals.add(new GoalCheck(
					http + ": saturated throughput with the limiter against without (memory backend, pinned)",
					String.format(Locale.ROOT, "≥ %.1f×", GOAL_RATIO),
					String.format(Locale.ROOT, "%.2f×", saturated.ratio()), saturated.ratio() >= GOAL_RATIO));
		}
		List<String> redis = new ArrayList<>();
		boolean redisMet = true;
		for (Row row : rows) {
			if (row.mode().equals("redis") && row.variant().equals(ON) && !Double.isNaN(row.ratio())) {
				redis.add(String.format(Locale.ROOT, "%d connections: %.2f×", row.connections(), row.ratio()));
				redisMet &= row.ratio() >= GOAL_REDIS_RATIO;
			}
		}
		if (!redis.isEmpty()) {
			goals.add(new GoalCheck(http + " on Redis: throughput against one INCR per request",
					String.format(Locale.ROOT, "≥ %.2f×", GOAL_REDIS_RATIO), String.join("; ", redis), redisMet));
		}
		return goals;
	}

	private static Row find(List<Row> rows, String mode, String variant, int connections) {
		return rows.stream()
			.filter((r) -> r.mode().equals(mode) && r.variant().equals(variant)
					&& (connections < 0 || r.connections() == connections))
			.findFirst()
			.orElse(null);
	}

	/**
	 * The rows as Markdown tables, one per mode.
	 * @param rows what {@link #run(Settings)} returned
	 * @param options the options of the run, named in the notes
	 * @return the tables, ending with a newline
	 */
	public static String table(List<Row> rows, Settings options) {
		StringBuilder out = new StringBuilder();
		List<Row> cpu = rows.stream().filter((r) -> r.mode().equals("cpu")).toList();
		if (!cpu.isEmpty()) {
			out.append(String.format(Locale.ROOT,
					"**Server CPU per request at %,d requests/s** (%smemory backend, open loop, %d connections)%n%n",
					options.rate(), options.stack().tablePrefix(), options.connections()));
			out.append("| Variant | Requests/s | Server CPU µs/request | Added by the limiter | Bytes allocated/request "
					+ "| Added by the limiter | p50 µs | p99 µs |\n");
			out.append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
			for (Row r : cpu) {
				boolean compared = !Double.isNaN(r.cpuAddedMicros());
				out.append(String.format(Locale.ROOT, "| %s | %,.0f | %.1f | %s | %,.0f | %s | %,.0f | %,.0f |%n",
						r.variant(), r.requestsPerSecond(), r.cpuMicrosPerRequest(),
						compared ? String.format(Locale.ROOT, "%+.1f µs", r.cpuAddedMicros()) : "",
						r.bytesPerRequest(), compared ? String.format(Locale.ROOT, "%+,.0f B", r.bytesAdded()) : "",
						r.p50Micros(), r.p99Micros()));
			}
			out.append('\n');
			threadTable(out, cpu, options.stack().tablePrefix() + "the same rounds");
		}
		List<Row> saturated = rows.stream().filter((r) -> r.mode().equals("saturated")).toList();
		if (!saturated.isEmpty()) {
			out.append(String.format(Locale.ROOT,
					"**Saturated throughput** (%smemory backend, closed loop, %d connections)%n%n",
					options.stack().tablePrefix(), options.connections()));
			out.append("| Variant | Requests/s | Ratio with/without | p50 µs | p99 µs | p99.9 µs "
					+ "| Server CPU µs/request | Added by the limiter | Server CPU busy |\n");
			out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
			for (Row r : saturated) {
				out.append(String.format(Locale.ROOT, "| %s | %,.0f | %s | %,.0f | %,.0f | %,.0f | %.1f | %s | %.0f%% |%n",
						r.variant(), r.requestsPerSecond(), ratio(r), r.p50Micros(), r.p99Micros(), r.p999Micros(),
						r.cpuMicrosPerRequest(),
						Double.isNaN(r.cpuAddedMicros()) ? "" : String.format(Locale.ROOT, "%+.1f µs", r.cpuAddedMicros()),
						100 * r.serverCpuShare()));
			}
			out.append('\n');
		}
		List<Row> redis = rows.stream().filter((r) -> r.mode().equals("redis")).toList();
		if (!redis.isEmpty()) {
			out.append("**Redis backend against one INCR per request** (" + options.stack().tablePrefix() + "closed loop)\n\n");
			out.append("| Connections | Variant | Requests/s | Ratio against the floor | p50 µs | p99 µs "
					+ "| Added p50 µs | Added p99 µs | Server CPU µs/request |\n");
			out.append("|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
			for (Row r : redis) {
				Row floor = find(rows, "redis", FLOOR, r.connections());
				boolean compared = floor != null && r != floor;
				out.append(String.format(Locale.ROOT, "| %d | %s | %,.0f | %s | %,.0f | %,.0f | %s | %s | %.1f |%n",
						r.connections(), r.variant(), r.requestsPerSecond(), ratio(r), r.p50Micros(), r.p99Micros(),
						compared ? String.format(Locale.ROOT, "%+,.0f", r.p50Micros() - floor.p50Micros()) : "",
						compared ? String.format(Locale.ROOT, "%+,.0f", r.p99Micros() - floor.p99Micros()) : "",
						r.cpuMicrosPerRequest()));
			}
			out.append('\n');
			redis.stream().mapToInt(Row::connections).distinct().forEach((connections) -> threadTable(out,
					redis.stream().filter((r) -> r.connections() == connections).toList(),
					options.stack().tablePrefix() + "Redis backend, " + connections + " connections, median round"));
		}
		out.append(String.format(Locale.ROOT,
				"%s sample (%s). Every variant in %d server JVM(s) of its own (%s), started in mirrored order%s, all warmed up (at "
						+ "least %d s each, then until the JIT settles, at most %d s), then %d rounds of %d s measuring "
						+ "each JVM in turn; a variant's round is the mean of its JVMs', each row is its variant's median "
						+ "round, and what the limiter adds (and the "
						+ "ratio) is the median over rounds of the difference (the ratio) within a round. %s. %d client IP(s). Every request "
						+ "decided with the limiter and none without (counted); non-2xx: 0.%n",
				(options.stack() == WebStack.SERVLET) ? "The servlet" : "The reactive", options.stack().module(),
				options.jvms(), String.join(" ", options.jvmOptions()),
				options.ablations().isEmpty() ? "" : " (an ablation measured at the fixed rate only)",
				options.warmup(), options.maxWarmup(), options.rounds(),
				options.seconds(), CpuPinning.of(options.pin()).describe(), options.clientIps()));
		return out.toString();
	}

	/**
	 * Where the server's CPU time per request goes, by thread group: each
	 * variant's median round, and what the limiter adds to each group (the median
	 * over rounds of the difference within a round).
	 */
	private static void threadTable(StringBuilder out, List<Row> rows, String which) {
		if (rows.stream().anyMatch((r) -> r.threadMicros().isEmpty())) {
			return;
		}
		out.append("**Server CPU per request by thread** (").append(which).append("; µs per request)\n\n| Thread group |");
		rows.forEach((r) -> out.append(' ').append(r.variant()).append(" |"));
		rows.stream()
			.filter((r) -> !r.threadAdded().isEmpty())
			.forEach((r) -> out.append(" added by ").append(r.variant()).append(" |"));
		out.append("\n|---|");
		rows.forEach((r) -> out.append("---:|"));
		rows.stream().filter((r) -> !r.threadAdded().isEmpty()).forEach((r) -> out.append("---:|"));
		out.append('\n');
		for (String group : ServerProbe.THREAD_GROUPS) {
			if (rows.stream().allMatch((r) -> r.threadMicros().get(group) == 0)) {
				// No thread of this group in this stack's servers (Tomcat's poller under Netty, say).
				continue;
			}
			out.append("| ").append(group).append(" |");
			rows.forEach((r) -> out.append(String.format(Locale.ROOT, " %.1f |", r.threadMicros().get(group))));
			rows.stream()
				.filter((r) -> !r.threadAdded().isEmpty())
				.forEach((r) -> out.append(String.format(Locale.ROOT, " %+.1f |", r.threadAdded().get(group))));
			out.append('\n');
		}
		out.append('\n');
	}

	private static String ratio(Row r) {
		return Double.isNaN(r.ratio()) ? "" : String.format(Locale.ROOT, "%.2f", r.ratio());
	}

}
