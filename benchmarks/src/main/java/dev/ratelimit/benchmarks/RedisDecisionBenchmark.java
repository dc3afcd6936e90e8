package dev.ratelimit.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.AsyncBucketProxy;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.AsyncProxyManager;
import io.github.bucket4j.distributed.proxy.optimization.Optimizations;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.github.bucket4j.redis.lettuce.cas.LettuceBasedProxyManager;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.NestedMultiOutput;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.DefaultRedisScript;
import org.springframework.data.redis.core.script.RedisScript;

import dev.ratelimit.benchmarks.LuaDecision.Send;
import dev.ratelimit.core.Acquisition;
import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Refill;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.prefetch.PrefetchingBackend;
import dev.ratelimit.redis.RedisLimiterConnection;
import dev.ratelimit.redis.RedisRateLimitBackend;

/**
 * Redis decisions per second, latency percentiles and Redis' own CPU per
 * decision with many concurrent callers, against a {@code redis-server} this
 * program starts on a free port, pinned to its own CPU ({@code taskset}) with
 * the callers on the other, so that Redis, not the callers, is what the cases
 * saturate as far as one client CPU allows. Not JMH: a fixed-duration closed
 * loop of N callers, each recording every call's latency.
 * <p>
 * Cases: our {@link RedisRateLimitBackend} (token bucket, limits so high that
 * nothing is denied) on the limiter's own connection as production connects it
 * ({@link RedisLimiterConnection}: one shared Lettuce connection, its function
 * library loaded), with decisions coalesced (the default) and with one call
 * per decision; prefetch mode; a plain {@code INCR} per request through the
 * limiter's connection factory (pipelined on its one connection, the floor of
 * a round trip); Bucket4j's Lettuce compare-and-swap proxy, alone and with
 * {@code Optimizations.batching()}; on request, the same backend sending
 * {@code EVALSHA} and the minimal GCRA script. Each at 1, 64 and 256 callers
 * that wait for their answer (threads), and at 64 and 256 callers that do not
 * (requests outstanding, each asking again when answered, as reactive requests
 * do), on one hot key and on 10,000 keys drawn uniformly. Redis commands per
 * decision come from {@code INFO commandstats}, its CPU time (user and system,
 * so its I/O too) from {@code INFO cpu}, both read around each measured round.
 * Then each exact case and Bucket4j's decide a limit that binds, and their
 * admissions are counted against what the limit allows.
 * <p>
 * Run: {@code java -cp benchmarks/target/benchmarks.jar dev.ratelimit.benchmarks.RedisDecisionBenchmark
 * [--seconds 6] [--warmup 3] [--rounds 3] [--threads 1,64,256] [--async-callers 64,256]
 * [--cases coalesced,one-call,incr,bucket4j,bucket4j-batching,prefetch,ours-evalsha,floor]
 * [--exactness true] [--pin auto|none|S/C]}
 * <p>
 * With {@code --caller true} it measures instead what each case costs the
 * thread that decides, one caller at a time: CPU time and bytes allocated per
 * decision.
 */
public final class RedisDecisionBenchmark {

	private static final long CAPACITY = 1_000_000_000L;

	private static final int MANY_KEYS = 10_000;

	/** Tokens per call to Redis in the prefetch-mode case. */
	private static final long PREFETCH = 100;

	/** Commands a client sends and whose server time is reported; scripts' inner commands are counted apart. */
	static final List<String> SCRIPTED = List.of("evalsha", "eval", "fcall", "incr");

	/** The name of the INCR case, the floor of a round trip that the other cases are compared with. */
	static final String INCR = "plain INCR (floor)";

	/** Name prefix of the minimal script's cases, the floor of a Lua decision. */
	static final String MINIMAL_SCRIPT = "minimal GCRA script";

	private RedisDecisionBenchmark() {
	}

	interface Decider {

		boolean decide(int keyIndex);

	}

	/** A decision that does not hold its caller: what a reactive request asks, on the same backends. */
	interface AsyncDecider {

		CompletionStage<Boolean> decide(int keyIndex);

	}

	record Result(String name, int keys, int threads, long decisions, long denied, double seconds,
			long[] latenciesNanos, Map<String, Long> commands, double redisCpuSeconds) {

		Result(String name, int keys, long decisions, long denied, double seconds, long[] latenciesNanos,
				Map<String, Long> commands) {
			this(name, keys, 0, decisions, denied, seconds, latenciesNanos, commands, Double.NaN);
		}

		/**
		 * One case's rounds as one result: decisions, time and commands summed,
		 * latencies pooled.
		 */
		static Result merge(List<Result> rounds) {
			long decisions = 0;
			long denied = 0;
			double seconds = 0;
			double cpu = 0;
			Map<String, Long> commands = new LinkedHashMap<>();
			for (Result round : rounds) {
				decisions += round.decisions;
				denied += round.denied;
				seconds += round.seconds;
				cpu += round.redisCpuSeconds;
				round.commands.forEach((command, calls) -> commands.merge(command, calls, Long::sum));
			}
			long[] latencies = rounds.stream().flatMapToLong((round) -> Arrays.stream(round.latenciesNanos)).toArray();
			Arrays.sort(latencies);
			Result first = rounds.get(0);
			return new Result(first.name, first.keys, first.threads, decisions, denied, seconds, latencies, commands,
					cpu);
		}

		/** Redis' own CPU time per decision, user and system (its I/O too), from INFO cpu; NaN when not read. */
		double redisCpuMicrosPerDecision() {
			return this.redisCpuSeconds * 1e6 / this.decisions;
		}

		double perSecond() {
			return this.decisions / this.seconds;
		}

		double percentileMicros(double p) {
			if (this.latenciesNanos.length == 0) {
				return Double.NaN;
			}
			int index = (int) Math.min(this.latenciesNanos.length - 1, Math.ceil(p * this.latenciesNanos.length) - 1);
			return this.latenciesNanos[Math.max(0, index)] / 1_000.0;
		}

		double commandsPerDecision() {
			return this.commands.entrySet()
				.stream()
				.filter((e) -> !e.getKey().endsWith(".usec"))
				.mapToLong(Map.Entry::getValue)
				.sum() / (double) this.decisions;
		}

		/** INCRs sent per decision: the INCR case's one command. */
		double incrsPerDecision() {
			return this.commands.getOrDefault("incr", 0L) / (double) this.decisions;
		}

		/** Scripts (EVAL, EVALSHA, FCALL) sent by the client per decision. */
		double scriptsPerDecision() {
			return (this.commands.getOrDefault("eval", 0L) + this.commands.getOrDefault("evalsha", 0L)
					+ this.commands.getOrDefault("fcall", 0L)) / (double) this.decisions;
		}

		/** Server microseconds per decision spent in the top-level EVAL, EVALSHA, FCALL or INCR. */
		double serverMicrosPerDecision() {
			return this.commands.entrySet()
				.stream()
				.filter((e) -> e.getKey().endsWith(".usec"))
				.mapToLong(Map.Entry::getValue)
				.sum() / (double) this.decisions;
		}

	}

	public static void main(String[] args) throws Exception {
		Options options = Options.parse(args);
		List<Result> results = run(options);
		System.out.println();
		System.out.println(table(results));
		System.out.println(exactnessTable(exactness));
		System.out.println("Minimal GCRA script over plain INCR: " + minimalScriptVersusIncr(results));
	}

	/**
	 * Runs every case and returns the results.
	 * @param options {@code seconds} (measured per case, split over {@code rounds}, default 3), {@code warmup}
	 * (once per case first), {@code threads} (a list: each count of callers is run), {@code cases}, {@code pin}
	 * ({@code auto} puts {@code redis-server} on the last CPU and this program on the others, see
	 * {@link CpuPinning}; {@code none})
	 * @return one result per case, count of callers and key count
	 * @throws Exception if the server cannot be started or a case fails
	 */
	static List<Result> run(Options options) throws Exception {
		int seconds = options.integer("seconds", 6);
		int warmup = options.integer("warmup", 3);
		List<Integer> threadCounts = options.list("threads", "1,64,256").stream().map(Integer::valueOf).toList();
		int rounds = options.integer("rounds", 3);
		int perRound = Math.max(1, Math.round(seconds / (float) rounds));
		List<String> cases = options.list("cases", DEFAULT_CASES);
		CpuPinning pinning = CpuPinning.of(options.string("pin", "auto"));
		List<Result> results = new ArrayList<>();
		// Redis alone on its CPU, the callers on the others: Redis is what saturates, as a shared Redis does.
		List<String> wrapper = pinning.pins() ? List.of("taskset", "-c", pinning.serverCpus()) : List.of();
		try (RedisServerProcess server = RedisServerProcess.start(wrapper)) {
			long self = ProcessHandle.current().pid();
			String before = pinning.pinToClient(self);
			System.out.printf(Locale.ROOT, "redis-server %s on port %d (%s); %s callers, %ds warm-up, %d rounds of %ds "
					+ "measured per case%n", server.version(), server.port(),
					pinning.pins() ? "CPU " + pinning.serverCpus() + ", callers on CPU " + pinning.clientCpus()
							: "not pinned",
					threadCounts, warmup, rounds, perRound);
			// Production's connection: the limiter's own factory, scripts called as functions, decisions coalesced.
			// INCR and the minimal script go through it too, so every row pays the same client.
			RedisLimiterConnection limiter = ProductionCommand.connect(server);
			RedisLimiterConnection oneCall = ProductionCommand.connect(server, RedisLimiterConnection.Coalescing.OFF);
			RedisConnectionFactory factory = limiter.connectionFactory();
			LettuceConnectionFactory plain = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration("127.0.0.1", server.port()));
			plain.afterPropertiesSet();
			plain.start();
			RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", server.port()));
			StatefulRedisConnection<String, byte[]> bucket4jConnection = client
				.connect(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE));
			try {
				String[] keyNames = new String[MANY_KEYS];
				for (int k = 0; k < MANY_KEYS; k++) {
					keyNames[k] = "rl:bench:{user-" + k + "}";
				}
				Map<String, Decider> deciders = deciders(cases, LASTING, Bandwidth.builder()
					.capacity(CAPACITY)
					.refillGreedy(1, Duration.ofSeconds(1))
					.build(), keyNames, limiter, oneCall, plain, bucket4jConnection);
				if (cases.contains("incr")) {
					StringRedisTemplate template = new StringRedisTemplate(factory);
					deciders.put(INCR, (k) -> template.opsForValue().increment(keyNames[k]) > 0);
				}
				if (cases.contains("floor")) {
					addMinimalScript(deciders, factory, server, keyNames);
				}

				if (Boolean.parseBoolean(options.string("caller", "false"))) {
					callerCost(deciders, server);
					return results;
				}
				// One warm-up of every case first, so that the first case measured does not pay for the JIT alone;
				// each on an empty server, as the cases share key names and INCR's counters are no script's state.
				for (Decider decider : deciders.values()) {
					server.call("FLUSHALL");
					run(decider, MANY_KEYS, 64, warmup, false);
				}
				for (int threads : threadCounts) {
					for (int keys : new int[] { 1, MANY_KEYS }) {
						results.addAll(measure(server, deciders, keys, threads, rounds, perRound));
					}
				}
				List<Integer> asyncCallers = options.list("async-callers", "64,256")
					.stream()
					.filter((c) -> !c.isBlank())
					.map(Integer::valueOf)
					.toList();
				if (!asyncCallers.isEmpty()) {
					Map<String, Decider> asyncDeciders = asyncDeciders(cases, LASTING, keyNames, limiter, oneCall,
							client, bucket4jConnection);
					for (Decider decider : asyncDeciders.values()) {
						server.call("FLUSHALL");
						run(decider, MANY_KEYS, 64, warmup, false);
					}
					for (int callers : asyncCallers) {
						for (int keys : new int[] { 1, MANY_KEYS }) {
							results.addAll(measure(server, asyncDeciders, keys, callers, rounds, perRound));
						}
					}
				}
				if (Boolean.parseBoolean(options.string("exactness", "true"))) {
					exactness = exactness(server, cases, keyNames, limiter, oneCall, plain, bucket4jConnection);
				}
			}
			finally {
				bucket4jConnection.close();
				client.shutdown();
				plain.destroy();
				oneCall.close();
				limiter.close();
				CpuPinning.restore(self, before);
			}
		}
		return results;
	}

	/** The name prefix of the cases whose callers do not wait: a caller is a request outstanding. */
	static final String ASYNC = "async: ";

	/**
	 * The cases again with callers that do not wait, each a request
	 * outstanding that asks again as soon as it is answered, as reactive
	 * requests do: no thread is woken per decision, so the callers' CPU can make
	 * Redis the one that saturates. Their deciders hand {@link #run} a blocking
	 * face: each "thread" of theirs runs one caller's loop of asynchronous
	 * requests to its end.
	 */
	private static Map<String, Decider> asyncDeciders(List<String> cases, RateLimitPolicy policy, String[] keyNames,
			RedisLimiterConnection limiter, RedisLimiterConnection oneCall, RedisClient client,
			StatefulRedisConnection<String, byte[]> bucket4jConnection) {
		Map<String, AsyncDecider> deciders = new LinkedHashMap<>();
		if (cases.contains("coalesced")) {
			RedisRateLimitBackend backend = new RedisRateLimitBackend(limiter.connectionFactory());
			deciders.put(ASYNC + COALESCED + " (FCALL token bucket)", (k) -> backend
				.tryConsumeAllAsync(List.of(new Acquisition(policy, keyNames[k], 1)), Runnable::run)
				.thenApply((decisions) -> decisions.get(0).allowed()));
		}
		if (cases.contains("one-call")) {
			RedisRateLimitBackend backend = new RedisRateLimitBackend(oneCall.connectionFactory());
			deciders.put(ASYNC + ONE_CALL + " (FCALL token bucket)", (k) -> backend
				.tryConsumeAllAsync(List.of(new Acquisition(policy, keyNames[k], 1)), Runnable::run)
				.thenApply((decisions) -> decisions.get(0).allowed()));
		}
		if (cases.contains("incr")) {
			RedisAsyncCommands<String, String> commands = client.connect().async();
			deciders.put(ASYNC + INCR, (k) -> commands.incr(keyNames[k]).thenApply((value) -> value > 0));
		}
		if (cases.contains("bucket4j-batching")) {
			AsyncProxyManager<String> proxies = Bucket4jLettuce.casBasedBuilder(bucket4jConnection)
				.expirationAfterWrite(
						ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10)))
				.build()
				.asAsync();
			BucketConfiguration configuration = BucketConfiguration.builder()
				.addLimit(Bandwidth.builder().capacity(CAPACITY).refillGreedy(1, Duration.ofSeconds(1)).build())
				.build();
			AsyncBucketProxy[] buckets = new AsyncBucketProxy[MANY_KEYS];
			for (int k = 0; k < MANY_KEYS; k++) {
				buckets[k] = proxies.builder()
					.withOptimization(Optimizations.batching())
					.build(keyNames[k] + ":b4ja", () -> CompletableFuture.completedFuture(configuration));
			}
			deciders.put(ASYNC + BUCKET4J_BATCHING, (k) -> buckets[k].tryConsume(1));
		}
		Map<String, Decider> blocking = new LinkedHashMap<>();
		deciders.forEach((name, decider) -> blocking.put(name, new AsyncCaller(decider)));
		return blocking;
	}

	/**
	 * The policy the throughput cases decide: a bucket of 10^9, so that nothing
	 * is denied, refilled at one token a second, so that a key stays in Redis as
	 * a key in steady use does (and as INCR's counters do). Refilled at 10^9 a
	 * second, as {@link ProductionCommand#tokenBucket} is for the server time,
	 * every decision would leave a key that expires a millisecond later, and
	 * Redis would spend much of its time creating and expiring keys.
	 */
	static final RateLimitPolicy LASTING = RateLimitPolicy.builder("bench")
		.algorithm(Algorithm.TOKEN_BUCKET)
		.capacity(CAPACITY)
		.refill(Refill.of(1, Duration.ofSeconds(1)))
		.build();

	/** The cases a run measures unless told otherwise. */
	static final String DEFAULT_CASES = "coalesced,one-call,incr,bucket4j,bucket4j-batching,prefetch";

	/** The name prefix of our coalesced case, production's default. */
	static final String COALESCED = "ours, coalesced";

	/** The name prefix of our case of one call per decision, as before coalescing. */
	static final String ONE_CALL = "ours, one call per decision";

	/** The name prefix of Bucket4j's case with its batching optimization. */
	static final String BUCKET4J_BATCHING = "Bucket4j, Optimizations.batching()";

	/** How far each limiter admitted beyond a binding limit in the last run, see {@link #exactness}. */
	static List<Exactness> exactness = List.of();

	/** Our backends and Bucket4j's proxies, deciding one token-bucket policy (ours) or bandwidth (Bucket4j). */
	private static Map<String, Decider> deciders(List<String> cases, RateLimitPolicy policy, Bandwidth bandwidth,
			String[] keyNames, RedisLimiterConnection limiter, RedisLimiterConnection oneCall,
			LettuceConnectionFactory plain, StatefulRedisConnection<String, byte[]> bucket4jConnection) {
		Map<String, Decider> deciders = new LinkedHashMap<>();
		if (cases.contains("coalesced")) {
			RedisRateLimitBackend backend = new RedisRateLimitBackend(limiter.connectionFactory());
			deciders.put(COALESCED + " (FCALL token bucket)", (k) -> backend.tryConsume(policy, keyNames[k], 1).allowed());
		}
		if (cases.contains("one-call")) {
			RedisRateLimitBackend backend = new RedisRateLimitBackend(oneCall.connectionFactory());
			deciders.put(ONE_CALL + " (FCALL token bucket)", (k) -> backend.tryConsume(policy, keyNames[k], 1).allowed());
		}
		if (cases.contains("ours-evalsha")) {
			// Where Redis refuses functions: the same backend on a plain factory sends EVALSHA.
			RedisRateLimitBackend backend = new RedisRateLimitBackend(plain);
			deciders.put("ours, EVALSHA (functions refused)", (k) -> backend.tryConsume(policy, keyNames[k], 1).allowed());
		}
		if (cases.contains("prefetch")) {
			RateLimitPolicy prefetched = policy.toBuilder(policy.name() + "-prefetch").prefetch(PREFETCH).build();
			PrefetchingBackend backend = new PrefetchingBackend(new RedisRateLimitBackend(limiter.connectionFactory()),
					TimeSource.system(), MANY_KEYS);
			deciders.put("ours, prefetch " + PREFETCH + " (not exact)",
					(k) -> backend.tryConsume(prefetched, keyNames[k], 1).allowed());
		}
		BucketConfiguration configuration = BucketConfiguration.builder().addLimit(bandwidth).build();
		LettuceBasedProxyManager<String> proxies = null;
		if (cases.contains("bucket4j") || cases.contains("bucket4j-batching")) {
			proxies = Bucket4jLettuce.casBasedBuilder(bucket4jConnection)
				.expirationAfterWrite(
						ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10)))
				.build();
		}
		if (cases.contains("bucket4j")) {
			BucketProxy[] buckets = new BucketProxy[MANY_KEYS];
			for (int k = 0; k < MANY_KEYS; k++) {
				buckets[k] = proxies.builder().build(keyNames[k] + ":b4j", () -> configuration);
			}
			deciders.put("Bucket4j Lettuce CAS proxy", (k) -> buckets[k].tryConsume(1));
		}
		if (cases.contains("bucket4j-batching")) {
			BucketProxy[] buckets = new BucketProxy[MANY_KEYS];
			for (int k = 0; k < MANY_KEYS; k++) {
				buckets[k] = proxies.builder()
					.withOptimization(Optimizations.batching())
					.build(keyNames[k] + ":b4jb", () -> configuration);
			}
			deciders.put(BUCKET4J_BATCHING, (k) -> buckets[k].tryConsume(1));
		}
		return deciders;
	}

	/**
	 * One count of callers and keys: rounds, every case once in each, in an
	 * order rotated by one (this machine's speed moves within seconds, and a
	 * case measured in one stretch would carry its moment into the ratios), each
	 * on an empty server after a second of its own warm-up, with Redis' command
	 * counts and CPU time read around it.
	 */
	private static List<Result> measure(RedisServerProcess server, Map<String, Decider> deciders, int keys,
			int threads, int rounds, int perRound) throws InterruptedException {
		Map<String, List<Result>> measured = new LinkedHashMap<>();
		List<String> names = new ArrayList<>(deciders.keySet());
		for (int round = 0; round < rounds; round++) {
			for (int i = 0; i < names.size(); i++) {
				String name = names.get((i + round) % names.size());
				// The cases share key names, and INCR's counters are no state of a script's.
				server.call("FLUSHALL");
				run(deciders.get(name), keys, threads, 1, false);
				double cpuBefore = redisCpuSeconds(server.call("INFO", "cpu"));
				server.call("CONFIG", "RESETSTAT");
				Result one = run(deciders.get(name), keys, threads, perRound, true);
				Map<String, Long> commands = commandStats(server.call("INFO", "commandstats"));
				double cpu = redisCpuSeconds(server.call("INFO", "cpu")) - cpuBefore;
				measured.computeIfAbsent(name, (n) -> new ArrayList<>())
					.add(new Result(name, keys, threads, one.decisions(), one.denied(), one.seconds(),
							one.latenciesNanos(), commands, cpu));
			}
		}
		List<Result> results = new ArrayList<>();
		for (String name : names) {
			Result result = Result.merge(measured.get(name));
			results.add(result);
			System.out.printf(Locale.ROOT, "%-44s callers=%-3d keys=%-6d %9.0f decisions/s  p50 %7.1f us  p99 %7.1f us"
					+ "  Redis CPU %5.2f us/decision  calls/decision %.3f  denied %d%n", result.name(), threads, keys,
					result.perSecond(), result.percentileMicros(0.50), result.percentileMicros(0.99),
					result.redisCpuMicrosPerDecision(), result.scriptsPerDecision() + result.incrsPerDecision(),
					result.denied());
		}
		return results;
	}

	/** Redis' CPU seconds so far, user and system, of its main thread and the rest, from {@code INFO cpu}. */
	static double redisCpuSeconds(String info) {
		double seconds = 0;
		for (String line : info.split("\r?\n")) {
			if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
				seconds += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
			}
		}
		return seconds;
	}

	/**
	 * How far each limiter admits beyond a limit that binds: one hot key, a
	 * bucket of {@value #EXACT_CAPACITY} refilled at {@value #EXACT_RATE} a second,
	 * 64 and 256 callers for {@value #EXACT_SECONDS} s. An exact limiter admits
	 * at most its capacity and what refilled while the run lasted; every
	 * admission beyond that is one the limit did not allow.
	 */
	private static List<Exactness> exactness(RedisServerProcess server, List<String> cases, String[] keyNames,
			RedisLimiterConnection limiter, RedisLimiterConnection oneCall, LettuceConnectionFactory plain,
			StatefulRedisConnection<String, byte[]> bucket4jConnection) throws InterruptedException {
		RateLimitPolicy binding = RateLimitPolicy.builder("exact")
			.algorithm(Algorithm.TOKEN_BUCKET)
			.capacity(EXACT_CAPACITY)
			.refill(Refill.of(EXACT_RATE, Duration.ofSeconds(1)))
			.build();
		List<String> exactCases = cases.stream()
			.filter((c) -> List.of("coalesced", "one-call", "bucket4j", "bucket4j-batching").contains(c))
			.toList();
		List<Exactness> rows = new ArrayList<>();
		for (int threads : new int[] { 64, 256 }) {
			for (int attempt = 0; attempt < 2; attempt++) {
				Map<String, Decider> deciders = deciders(exactCases, binding, Bandwidth.builder()
					.capacity(EXACT_CAPACITY)
					.refillGreedy(EXACT_RATE, Duration.ofSeconds(1))
					.build(), keyNames, limiter, oneCall, plain, bucket4jConnection);
				for (Map.Entry<String, Decider> decider : deciders.entrySet()) {
					server.call("FLUSHALL");
					Result run = run(decider.getValue(), 1, threads, EXACT_SECONDS, false);
					long admitted = run.decisions() - run.denied();
					long bound = EXACT_CAPACITY + (long) Math.ceil(EXACT_RATE * run.seconds());
					rows.add(new Exactness(decider.getKey(), threads, run.decisions(), admitted, bound));
					System.out.printf(Locale.ROOT, "exactness %-44s callers=%-3d %,9d decisions, %,7d admitted, at most "
							+ "%,7d allowed: %,d beyond%n", decider.getKey(), threads, run.decisions(), admitted, bound,
							Math.max(0, admitted - bound));
				}
			}
		}
		return rows;
	}

	private static final long EXACT_CAPACITY = 1_000;

	private static final long EXACT_RATE = 2_000;

	private static final int EXACT_SECONDS = 3;

	/**
	 * One limiter's admissions under a binding limit.
	 * @param name the case
	 * @param threads its callers
	 * @param decisions decisions made
	 * @param admitted decisions admitted
	 * @param bound the most an exact limiter admits in that time
	 */
	record Exactness(String name, int threads, long decisions, long admitted, long bound) {

		long beyond() {
			return Math.max(0, this.admitted - this.bound);
		}

	}

	/**
	 * What each case costs its caller: one thread deciding alone over 10,000
	 * keys, 20,000 decisions after as many to warm up, three rounds, its CPU
	 * time and bytes allocated per decision from the thread's own counters
	 * (Lettuce's event loop, which writes and reads the sockets, is not counted).
	 */
	private static void callerCost(Map<String, Decider> deciders, RedisServerProcess server) {
		com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory
			.getThreadMXBean();
		int[] keys = KeyDistribution.uniform(MANY_KEYS, 7L);
		int calls = 20_000;
		for (int round = 0; round < 3; round++) {
			for (Map.Entry<String, Decider> decider : deciders.entrySet()) {
				// The cases share key names, and INCR's counters are no state of a script's.
				server.call("FLUSHALL");
				for (int i = 0; i < calls; i++) {
					decider.getValue().decide(keys[i & KeyDistribution.MASK]);
				}
				long cpu = threads.getCurrentThreadCpuTime();
				long bytes = threads.getCurrentThreadAllocatedBytes();
				for (int i = 0; i < calls; i++) {
					decider.getValue().decide(keys[i & KeyDistribution.MASK]);
				}
				double micros = (threads.getCurrentThreadCpuTime() - cpu) / 1e3 / calls;
				double allocated = (threads.getCurrentThreadAllocatedBytes() - bytes) / (double) calls;
				System.out.printf(Locale.ROOT, "caller round %d  %-34s %6.2f us CPU  %7.0f B per decision%n", round,
						decider.getKey(), micros, allocated);
			}
		}
	}

	/**
	 * The minimal GCRA script through the same connection factory: as EVALSHA
	 * the way Spring runs ours ({@link StringRedisTemplate#execute(RedisScript, List, Object...)},
	 * EVAL once on NOSCRIPT), and as FCALL on a connection of the factory, its
	 * reply read as Lettuce reads nested arrays.
	 */
	@SuppressWarnings({ "rawtypes", "unchecked" })
	private static void addMinimalScript(Map<String, Decider> deciders, RedisConnectionFactory factory,
			RedisServerProcess server, String[] keyNames) {
		LuaDecision floor = LuaDecision.minimalGcra();
		StringRedisTemplate template = new StringRedisTemplate(factory);
		RedisScript<List<Object>> script = (RedisScript) new DefaultRedisScript<>(floor.script(), List.class);
		Object[] arguments = floor.arguments().toArray();
		List<List<String>> keys = new ArrayList<>(MANY_KEYS);
		byte[][][] fcall = new byte[MANY_KEYS][][];
		for (int k = 0; k < MANY_KEYS; k++) {
			keys.add(List.of(keyNames[k]));
			List<String> command = floor.command(Send.FCALL, keyNames[k]);
			fcall[k] = command.subList(1, command.size())
				.stream()
				.map((argument) -> argument.getBytes(StandardCharsets.UTF_8))
				.toArray(byte[][]::new);
		}
		deciders.put(MINIMAL_SCRIPT + ", EVALSHA",
				(k) -> Long.valueOf(1).equals(template.execute(script, keys.get(k), arguments).get(0)));
		server.reply("FUNCTION", "LOAD", "REPLACE", floor.library());
		deciders.put(MINIMAL_SCRIPT + ", FCALL", (k) -> {
			try (RedisConnection connection = factory.getConnection()) {
				List<Object> reply = (List<Object>) ((LettuceConnection) connection).execute("FCALL",
						new NestedMultiOutput<>(ByteArrayCodec.INSTANCE), fcall[k]);
				return Long.valueOf(1).equals(reply.get(0));
			}
		});
	}

	/**
	 * A case's throughput over plain INCR's with the same number of keys.
	 * @param results the results of one run
	 * @param result one of them
	 * @return the ratio, NaN without an INCR case
	 */
	static double versusIncr(List<Result> results, Result result) {
		return results.stream()
			.filter((r) -> r.name().equals(INCR) && r.keys() == result.keys() && r.threads() == result.threads())
			.findFirst()
			.map((incr) -> result.perSecond() / incr.perSecond())
			.orElse(Double.NaN);
	}

	/**
	 * How close the floor of a Lua decision, the minimal script, gets to plain
	 * INCR's throughput: the bound of what any script can reach against the goal
	 * of ours at 0.85× INCR.
	 * @param results the results of one run
	 * @return per way of sending and key count, the ratio, e.g. {@code "EVALSHA, 1 key(s): 0.62×; ..."}
	 */
	static String minimalScriptVersusIncr(List<Result> results) {
		StringJoiner ratios = new StringJoiner("; ");
		for (Result result : results) {
			if (result.name().startsWith(MINIMAL_SCRIPT)) {
				ratios.add(String.format(Locale.ROOT, "%s, %,d key(s): %.2f×",
						result.name().substring(MINIMAL_SCRIPT.length() + 2), result.keys(), versusIncr(results, result)));
			}
		}
		return ratios.toString();
	}

	/**
	 * A caller that does not wait, in {@link #run}'s terms: {@link #run} gives
	 * each of its "threads" one such caller, whose requests follow each other
	 * from the thread that completes the one before, until told to stop; the
	 * thread itself only waits for that end.
	 */
	static final class AsyncCaller implements Decider {

		private final AsyncDecider decider;

		AsyncCaller(AsyncDecider decider) {
			this.decider = decider;
		}

		@Override
		public boolean decide(int keyIndex) {
			return this.decider.decide(keyIndex).toCompletableFuture().join();
		}

		/**
		 * Asks again and again until {@code stop}, recording each answer's latency.
		 * @return when the last request is answered: its count, denials and latencies
		 */
		CompletableFuture<long[][]> loop(int[] indices, int position, AtomicBoolean stop, boolean record) {
			CompletableFuture<long[][]> done = new CompletableFuture<>();
			new Object() {

				long[] latencies = new long[record ? 1 << 14 : 0];

				long count;

				long denied;

				int at = position;

				void next() {
					// A loop, not a recursion, for answers already there when asked.
					while (!stop.get()) {
						int key = indices[this.at];
						this.at = (this.at + 1) & KeyDistribution.MASK;
						long t0 = System.nanoTime();
						CompletableFuture<Boolean> answer = AsyncCaller.this.decider.decide(key).toCompletableFuture();
						if (!answer.isDone()) {
							answer.whenComplete((allowed, failure) -> {
								answered(t0, allowed, failure);
								next();
							});
							return;
						}
						answered(t0, answer.getNow(Boolean.FALSE), null);
					}
					done.complete(new long[][] { { this.count, this.denied }, Arrays.copyOf(this.latencies,
							record ? (int) Math.min(this.count, this.latencies.length) : 0) });
				}

				void answered(long t0, Boolean allowed, Throwable failure) {
					long elapsed = System.nanoTime() - t0;
					if (failure != null || !Boolean.TRUE.equals(allowed)) {
						this.denied++;
					}
					if (record) {
						if (this.count == this.latencies.length) {
							this.latencies = Arrays.copyOf(this.latencies, this.latencies.length * 2);
						}
						this.latencies[(int) this.count] = elapsed;
					}
					this.count++;
				}

			}.next();
			return done;
		}

	}

	static Result run(Decider decider, int keys, int threads, int seconds, boolean record)
			throws InterruptedException {
		if (decider instanceof AsyncCaller async) {
			return runAsync(async, keys, threads, seconds, record);
		}
		int[] indices = (keys == 1) ? new int[KeyDistribution.LENGTH] : KeyDistribution.uniform(keys, 7L);
		AtomicBoolean stop = new AtomicBoolean();
		CountDownLatch start = new CountDownLatch(1);
		long[][] latencies = new long[threads][];
		long[] counts = new long[threads];
		long[] denied = new long[threads];
		Thread[] workers = new Thread[threads];
		for (int t = 0; t < threads; t++) {
			int id = t;
			workers[t] = new Thread(() -> {
				long[] mine = new long[record ? 1 << 14 : 0];
				int n = 0;
				long d = 0;
				int position = (id * 7919) & KeyDistribution.MASK;
				try {
					start.await();
				}
				catch (InterruptedException ex) {
					return;
				}
				while (!stop.get()) {
					int key = indices[position];
					position = (position + 1) & KeyDistribution.MASK;
					long t0 = System.nanoTime();
					boolean allowed = decider.decide(key);
					long elapsed = System.nanoTime() - t0;
					if (!allowed) {
						d++;
					}
					if (record) {
						if (n == mine.length) {
							mine = Arrays.copyOf(mine, n * 2);
						}
						mine[n] = elapsed;
					}
					n++;
				}
				latencies[id] = record ? Arrays.copyOf(mine, n) : new long[0];
				counts[id] = n;
				denied[id] = d;
			}, "bench-" + t);
			workers[t].start();
		}
		long began = System.nanoTime();
		start.countDown();
		Thread.sleep(TimeUnit.SECONDS.toMillis(seconds));
		stop.set(true);
		for (Thread worker : workers) {
			worker.join();
		}
		double elapsed = (System.nanoTime() - began) / 1e9;
		long total = Arrays.stream(counts).sum();
		long totalDenied = Arrays.stream(denied).sum();
		long[] all = new long[0];
		if (record) {
			all = Arrays.stream(latencies).flatMapToLong(Arrays::stream).toArray();
			Arrays.sort(all);
		}
		return new Result("", keys, total, totalDenied, elapsed, all, Map.of());
	}

	/** {@link #run} for callers that do not wait: {@code callers} requests outstanding at all times. */
	private static Result runAsync(AsyncCaller caller, int keys, int callers, int seconds, boolean record)
			throws InterruptedException {
		int[] indices = (keys == 1) ? new int[KeyDistribution.LENGTH] : KeyDistribution.uniform(keys, 7L);
		AtomicBoolean stop = new AtomicBoolean();
		List<CompletableFuture<long[][]>> loops = new ArrayList<>(callers);
		long began = System.nanoTime();
		for (int c = 0; c < callers; c++) {
			loops.add(caller.loop(indices, (c * 7919) & KeyDistribution.MASK, stop, record));
		}
		Thread.sleep(TimeUnit.SECONDS.toMillis(seconds));
		stop.set(true);
		long total = 0;
		long denied = 0;
		List<long[]> latencies = new ArrayList<>();
		for (CompletableFuture<long[][]> loop : loops) {
			long[][] ended = loop.join();
			total += ended[0][0];
			denied += ended[0][1];
			latencies.add(ended[1]);
		}
		double elapsed = (System.nanoTime() - began) / 1e9;
		long[] all = latencies.stream().flatMapToLong(Arrays::stream).toArray();
		Arrays.sort(all);
		return new Result("", keys, total, denied, elapsed, all, Map.of());
	}

	/** Calls per command from INFO commandstats, leaving out the INFO call reading them. */
	static Map<String, Long> commandStats(String info) {
		Map<String, Long> calls = new LinkedHashMap<>();
		for (String line : info.split("\r\n")) {
			if (!line.startsWith("cmdstat_")) {
				continue;
			}
			String command = line.substring("cmdstat_".length(), line.indexOf(':'));
			String fields = line.substring(line.indexOf(':') + 1);
			for (String field : fields.split(",")) {
				if (field.startsWith("calls=")) {
					long n = Long.parseLong(field.substring("calls=".length()));
					if (command.equals("info")) {
						n--;
					}
					if (n > 0 && !command.startsWith("config")) {
						calls.put(command, n);
					}
				}
				if (field.startsWith("usec=") && SCRIPTED.contains(command)) {
					// Server time of the top-level commands; a script's includes the commands it runs.
					calls.put(command + ".usec", Long.parseLong(field.substring("usec=".length())));
				}
			}
		}
		return calls;
	}

	static String table(List<Result> results) {
		StringBuilder table = new StringBuilder();
		table.append("| Case | Callers | Keys | Decisions/s | p50 µs | p99 µs | p99.9 µs | × INCR | Redis CPU µs/decision "
				+ "| Server µs/decision | Calls/decision | Redis commands per decision, incl. those run inside scripts |\n");
		table.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
		for (Result r : results) {
			StringBuilder commands = new StringBuilder();
			r.commands().forEach((command, n) -> {
				if (command.endsWith(".usec")) {
					return;
				}
				if (commands.length() > 0) {
					commands.append(", ");
				}
				commands.append(String.format(Locale.ROOT, "%s %.3f", command.toUpperCase(Locale.ROOT),
						n / (double) r.decisions()));
			});
			double versusIncr = versusIncr(results, r);
			table.append(String.format(Locale.ROOT,
					"| %s | %d | %,d | %,.0f | %,.0f | %,.0f | %,.0f | %s | %.2f | %.2f | %.3f | %.2f (%s) |%n", r.name(),
					r.threads(), r.keys(), r.perSecond(), r.percentileMicros(0.50), r.percentileMicros(0.99),
					r.percentileMicros(0.999),
					Double.isNaN(versusIncr) ? "–" : String.format(Locale.ROOT, "%.2f×", versusIncr),
					r.redisCpuMicrosPerDecision(), r.serverMicrosPerDecision(),
					r.scriptsPerDecision() + r.incrsPerDecision(), r.commandsPerDecision(), commands));
		}
		return table.toString();
	}

	/** How far each limiter admitted beyond a binding limit, see {@link #exactness}. */
	static String exactnessTable(List<Exactness> rows) {
		StringBuilder table = new StringBuilder();
		table.append(String.format(Locale.ROOT, "One hot key, a bucket of %,d refilled at %,d/s, %d s a run, two runs "
				+ "each: an exact limiter admits at most its capacity and what refilled while the run lasted.%n%n",
				EXACT_CAPACITY, EXACT_RATE, EXACT_SECONDS));
		table.append("| Case | Callers | Decisions | Admitted | At most allowed | Admitted beyond the limit |\n");
		table.append("|---|---:|---:|---:|---:|---:|\n");
		for (Exactness row : rows) {
			table.append(String.format(Locale.ROOT, "| %s | %d | %,d | %,d | %,d | %,d |%n", row.name(), row.threads(),
					row.decisions(), row.admitted(), row.bound(), row.beyond()));
		}
		return table.toString();
	}

}
