package dev.ratelimit.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Refill;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.memory.InMemoryRateLimitBackend;
import dev.ratelimit.prefetch.PrefetchingBackend;
import dev.ratelimit.redis.RedisLimiterConnection;
import dev.ratelimit.redis.RedisRateLimitBackend;

/**
 * How exactly the limiter holds its limits under load, on the real clock.
 * <p>
 * <b>Rate</b>: callers hammer one token-bucket key far above its rate, from
 * 10/s to 100,000/s, on the memory and the Redis backend; the admitted rate
 * (tokens admitted beyond the initial burst, over the elapsed time) is compared
 * with the configured one. Redis cannot take 100,000 decisions a second on two
 * cores, so there each call asks for several tokens at the highest rates: the
 * rate is counted in tokens.
 * <p>
 * <b>Fleet</b>: 4 limiter instances (each its own backend and limiter
 * connection as production makes it, deciding with {@code FCALL}, as 4
 * application instances would) × 64 threads against one
 * Redis, on a token bucket and a fixed window, without and with prefetching. For
 * the token bucket it reports the total admitted against what the bucket allows
 * over the run, and the largest excess over any interval (admissions in it
 * minus the rate times its length; the bucket alone bounds that by its
 * capacity, prefetching adds at most {@code prefetch × instances}); timestamps are
 * taken by the client, so they carry the round trip's jitter. For the fixed
 * window it reports the most any window admitted, windows identified by the
 * reset time Redis returned.
 * <p>
 * Run: {@code java -cp benchmarks/target/benchmarks.jar dev.ratelimit.benchmarks.AccuracyBenchmark
 * [--seconds 10] [--rates 10,100,1000,10000,100000] [--fleet-seconds 10] [--prefetch 100] [--parts rate,fleet]}
 */
public final class AccuracyBenchmark {

	/** Fewest tokens a rate run expects, so that one token is at most half a percent. */
	private static final long MIN_TOKENS = 200;

	private static final int INSTANCES = 4;

	private static final int THREADS_PER_INSTANCE = 64;

	private static final long FLEET_RATE = 20_000;

	private static final long FLEET_CAPACITY = 1_000;

	private AccuracyBenchmark() {
	}

	/**
	 * One rate run: tokens admitted against the configured rate.
	 *
	 * @param backend {@code memory} or {@code redis}
	 * @param rate the configured rate per second
	 * @param cost tokens each call asks for
	 * @param threads concurrent callers
	 * @param seconds elapsed time
	 * @param admitted tokens admitted
	 * @param capacity the bucket's initial burst
	 */
	public record RateRow(String backend, long rate, long cost, int threads, double seconds, long admitted,
			long capacity) {

		/** @return the admitted rate beyond the initial burst, per second */
		public double measuredRate() {
			return (this.admitted - this.capacity) / this.seconds;
		}

		/** @return the most the bucket could have admitted: its burst plus the rate over the elapsed time */
		public long allowed() {
			return this.capacity + (long) Math.ceil(this.rate * this.seconds);
		}

		/** @return the measured rate's deviation from the configured one, in percent */
		public double errorPercent() {
			return 100.0 * (measuredRate() / this.rate - 1);
		}

	}

	/**
	 * One fleet run: several instances on one Redis key.
	 *
	 * @param policy a description of the policy
	 * @param prefetch the tokens prefetched per call to Redis, 0 when off
	 * @param seconds elapsed time
	 * @param calls decisions made
	 * @param admitted calls admitted
	 * @param allowed what the policy allows over the whole run
	 * @param worst for the token bucket the largest excess over any interval, for
	 * the window the most any window admitted
	 * @param bound the bound {@code worst} must stay under
	 * @param scripts scripts Redis ran (FCALL, or EVALSHA where the library is missing)
	 */
	public record FleetRow(String policy, long prefetch, double seconds, long calls, long admitted, long allowed,
			long worst, long bound, long scripts) {

		/** @return decisions per second, all instances together */
		public double callsPerSecond() {
			return this.calls / this.seconds;
		}

	}

	/**
	 * Both parts' results.
	 *
	 * @param rates the rate runs
	 * @param fleet the fleet runs
	 */
	public record Report(List<RateRow> rates, List<FleetRow> fleet) {
	}

	public static void main(String[] args) throws Exception {
		Report report = run(Options.parse(args));
		System.out.println();
		System.out.println(rateTable(report.rates()));
		System.out.println(fleetTable(report.fleet()));
	}

	static Report run(Options options) throws Exception {
		int seconds = options.integer("seconds", 10);
		int fleetSeconds = options.integer("fleet-seconds", 10);
		long prefetch = options.integer("prefetch", 100);
		List<String> parts = options.list("parts", "rate,fleet");
		List<RateRow> rates = new ArrayList<>();
		List<FleetRow> fleet = new ArrayList<>();
		try (RedisServerProcess server = RedisServerProcess.start()) {
			System.out.printf(Locale.ROOT, "redis-server %s on port %d%n", server.version(), server.port());
			if (parts.contains("rate")) {
				RedisLimiterConnection limiter = ProductionCommand.connect(server);
				try {
					RateLimitBackend memory = new InMemoryRateLimitBackend(TimeSource.system(), 1_000);
					RateLimitBackend redis = new RedisRateLimitBackend(limiter.connectionFactory());
					for (String rate : options.list("rates", "10,100,1000,10000,100000")) {
						long perSecond = Long.parseLong(rate);
						rates.add(rateRun("memory", memory, perSecond, 1, 2, seconds));
						rates.add(rateRun("redis", redis, perSecond, Math.max(1, perSecond / 20_000), 64, seconds));
					}
				}
				finally {
					limiter.close();
				}
			}
			if (parts.contains("fleet")) {
				RateLimitPolicy bucket = RateLimitPolicy.builder("fleet-bucket")
					.capacity(FLEET_CAPACITY)
					.refill(Refill.of(FLEET_RATE, Duration.ofSeconds(1)))
					.build();
				RateLimitPolicy window = RateLimitPolicy.builder("fleet-window")
					.algorithm(Algorithm.FIXED_WINDOW)
					.capacity(FLEET_RATE)
					.window("1s")
					.build();
				for (RateLimitPolicy policy : List.of(bucket, window)) {
					fleet.add(fleetRun(server, policy, fleetSeconds));
					fleet.add(fleetRun(server, policy.toBuilder(policy.name()).prefetch(prefetch).build(), fleetSeconds));
				}
			}
		}
		return new Report(rates, fleet);
	}

	private static RateRow rateRun(String name, RateLimitBackend backend, long rate, long cost, int threads,
			int seconds) throws InterruptedException {
		// A tenth of a second of burst: a caller descheduled for less than that loses no token to a full bucket.
		long capacity = Math.max(10, rate / 10);
		RateLimitPolicy policy = RateLimitPolicy.builder("accuracy")
			.capacity(Math.max(capacity, cost))
			.refill(Refill.of(rate, Duration.ofSeconds(1)))
			.build();
		String key = "rl:accuracy:{" + name + "-" + rate + "-" + System.nanoTime() + "}";
		double runSeconds = Math.max(seconds, (double) MIN_TOKENS / rate);
		AtomicLong admitted = new AtomicLong();
		double elapsed = closedLoop(threads, runSeconds, (thread) -> {
			if (backend.tryConsume(policy, key, cost).allowed()) {
				admitted.addAndGet(cost);
			}
		});
		RateRow row = new RateRow(name, rate, cost, threads, elapsed, admitted.get(), policy.capacity());
		System.out.printf(Locale.ROOT, "rate %-6s %,8d/s cost %d: %,d tokens in %.2f s = %,.1f/s (%+.2f%%)%n", name,
				rate, cost, row.admitted(), elapsed, row.measuredRate(), row.errorPercent());
		return row;
	}

	private static FleetRow fleetRun(RedisServerProcess server, RateLimitPolicy policy, int seconds)
			throws InterruptedException {
		server.call("FLUSHALL");
		List<RedisLimiterConnection> limiters = new ArrayList<>();
		List<RateLimitBackend> instances = new ArrayList<>();
		for (int i = 0; i < INSTANCES; i++) {
			RedisLimiterConnection limiter = ProductionCommand.connect(server);
			limiters.add(limiter);
			RateLimitBackend redis = new RedisRateLimitBackend(limiter.connectionFactory());
			instances.add((policy.prefetch() > 0) ? new PrefetchingBackend(redis, TimeSource.system(), 1_000) : redis);
		}
		try {
			String key = "rl:fleet:{" + policy.name() + "}";
			boolean window = policy.algorithm() == Algorithm.FIXED_WINDOW;
			int threads = INSTANCES * THREADS_PER_INSTANCE;
			long[][] admittedAt = new long[threads][1 << 12];
			int[] admittedCount = new int[threads];
			long[] calls = new long[threads];
			List<Map<Long, Long>> perWindow = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				perWindow.add(new HashMap<>());
			}
			server.call("CONFIG", "RESETSTAT");
			long windowMicros = policy.windowMicros();
			double elapsed = closedLoop(threads, seconds, (thread) -> {
				RateLimitBackend backend = instances.get(thread % INSTANCES);
				Decision decision = backend.tryConsume(policy, key, 1);
				calls[thread]++;
				if (!decision.allowed()) {
					return;
				}
				if (window) {
					// The window this decision counted in: its end, from the reset time Redis returned.
					long end = Math.round((double) (TimeSource.system().currentTimeMicros()
							+ decision.resetAfterMicros()) / windowMicros);
					perWindow.get(thread).merge(end, 1L, Long::sum);
				}
				else {
					int n = admittedCount[thread];
					if (n == admittedAt[thread].length) {
						admittedAt[thread] = Arrays.copyOf(admittedAt[thread], n * 2);
					}
					admittedAt[thread][n] = System.nanoTime();
					admittedCount[thread] = n + 1;
				}
			});
			long scripts = server.calls("fcall") + server.calls("evalsha");
			long totalCalls = Arrays.stream(calls).sum();
			FleetRow row;
			if (window) {
				Map<Long, Long> merged = new HashMap<>();
				perWindow.forEach((counts) -> counts.forEach((end, n) -> merged.merge(end, n, Long::sum)));
				long admitted = merged.values().stream().mapToLong(Long::longValue).sum();
				long worst = merged.values().stream().mapToLong(Long::longValue).max().orElse(0);
				row = new FleetRow("fixed window " + policy.capacity() + "/1s", policy.prefetch(), elapsed, totalCalls,
						admitted, policy.capacity() * merged.size(), worst, policy.capacity(), scripts);
			}
			else {
				long[] times = new long[Arrays.stream(admittedCount).sum()];
				int at = 0;
				for (int t = 0; t < threads; t++) {
					System.arraycopy(admittedAt[t], 0, times, at, admittedCount[t]);
					at += admittedCount[t];
				}
				Arrays.sort(times);
				long allowed = policy.capacity() + (long) (FLEET_RATE * elapsed);
				row = new FleetRow("token bucket " + policy.capacity() + ", " + FLEET_RATE + "/s", policy.prefetch(),
						elapsed, totalCalls, times.length, allowed, worstExcess(times, FLEET_RATE),
						policy.capacity() + INSTANCES * policy.prefetch(), scripts);
			}
			System.out.printf(Locale.ROOT, "fleet %s prefetch %d: %,d calls (%,.0f/s), %,d admitted of %,d allowed, "
					+ "worst %,d (bound %,d), %,d scripts%n", row.policy(), row.prefetch(), row.calls(),
					row.callsPerSecond(), row.admitted(), row.allowed(), row.worst(), row.bound(), row.scripts());
			return row;
		}
		finally {
			limiters.forEach(RedisLimiterConnection::close);
		}
	}

	/**
	 * The largest number of admissions in any interval beyond what the rate
	 * refills in it: max over i ≤ j of (j − i + 1) − rate × (t_j − t_i), in one
	 * pass as (j + 1 − rate·t_j) − min over i ≤ j of (i − rate·t_i).
	 */
	static long worstExcess(long[] sortedNanos, long ratePerSecond) {
		double perNano = ratePerSecond / 1e9;
		double lowest = Double.MAX_VALUE;
		double worst = 0;
		for (int i = 0; i < sortedNanos.length; i++) {
			double offset = sortedNanos[i] - (double) sortedNanos[0];
			lowest = Math.min(lowest, i - perNano * offset);
			worst = Math.max(worst, (i + 1 - perNano * offset) - lowest);
		}
		return (long) Math.floor(worst);
	}

	interface Call {

		void run(int thread);

	}

	/** Runs {@code threads} callers in a closed loop for the given time; returns the elapsed seconds. */
	private static double closedLoop(int threads, double seconds, Call call) throws InterruptedException {
		AtomicBoolean stop = new AtomicBoolean();
		CountDownLatch start = new CountDownLatch(1);
		Thread[] workers = new Thread[threads];
		for (int t = 0; t < threads; t++) {
			int id = t;
			workers[t] = new Thread(() -> {
				try {
					start.await();
				}
				catch (InterruptedException ex) {
					return;
				}
				while (!stop.get()) {
					call.run(id);
				}
			}, "accuracy-" + t);
			workers[t].start();
		}
		long began = System.nanoTime();
		start.countDown();
		Thread.sleep((long) (seconds * 1000));
		stop.set(true);
		for (Thread worker : workers) {
			worker.join();
		}
		// After the joins: a call in flight when the callers were told to stop is still decided, by Redis on
		// its own clock, and counts; the time it took must count too, or the bound is short by that tail.
		long ended = System.nanoTime();
		return (ended - began) / 1e9;
	}


	static String rateTable(List<RateRow> rows) {
		StringBuilder table = new StringBuilder();
		table.append("| Backend | Configured rate | Callers | Tokens per call | Seconds | Admitted tokens "
				+ "| Allowed (burst + rate × time) | Admitted rate beyond the burst | Error |\n");
		table.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
		for (RateRow row : rows) {
			table.append(String.format(Locale.ROOT, "| %s | %,d/s | %d | %d | %.1f | %,d | %,d | %,.1f/s | %+.2f%% |%n",
					row.backend(), row.rate(), row.threads(), row.cost(), row.seconds(), row.admitted(), row.allowed(),
					row.measuredRate(), row.errorPercent()));
		}
		return table.toString();
	}

	static String fleetTable(List<FleetRow> rows) {
		StringBuilder table = new StringBuilder();
		table.append("| Policy (" + INSTANCES + " instances × " + THREADS_PER_INSTANCE + " threads) | Prefetch | Decisions/s "
				+ "| Admitted | Allowed over the run | Worst interval / window | Bound | Redis scripts |\n");
		table.append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
		for (FleetRow row : rows) {
			table.append(String.format(Locale.ROOT, "| %s | %s | %,.0f | %,d | %,d | %,d | %,d | %,d |%n", row.policy(),
					(row.prefetch() > 0) ? Long.toString(row.prefetch()) : "off", row.callsPerSecond(), row.admitted(),
					row.allowed(), row.worst(), row.bound(), row.scripts()));
		}
		return table.toString();
	}

}
