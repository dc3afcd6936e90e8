package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;

import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs every benchmark, in-memory (JMH), Redis, Redis server time, HTTP (the
 * servlet sample, and the reactive one as the part {@code reactive}), the
 * gateway, start-up (beside Bucket4j's starter), accuracy, overload and the
 * adaptive cap, and writes
 * their tables, the goals they meet or miss and the machine into the benchmarks'
 * notebook, {@code benchmarks/NOTEBOOK.md}, between the markers {@value #BEGIN}
 * and {@value #END}, and the goals and the machine alone into the user page,
 * {@code docs/performance.md}, between {@value #GOALS_BEGIN} and
 * {@value #GOALS_END}. The text around the markers, the reading of the numbers,
 * is written by hand.
 * <p>
 * Run from the repository root, after
 * {@code mvn -q -pl benchmarks,sample-app,sample-reactive-app,sample-gateway -am package -DskipTests}:
 * {@code java -cp benchmarks/target/benchmarks.jar dev.ratelimit.benchmarks.RunAllBenchmarks}
 * (41 minutes on 2 cores in the last run; a part that fails is reported as a goal missed and
 * the others still run). Options: {@code --parts memory,redis,lua,http,reactive,gateway,startup,accuracy,overload,adaptive},
 * {@code --quick true} (short runs, to try the harness; the figures are not worth
 * publishing), {@code --docs path} (the user page, {@code docs/performance.md};
 * {@code none} prints only and writes neither page), {@code --notebook path}
 * ({@code benchmarks/NOTEBOOK.md}).
 */
public final class RunAllBenchmarks {

	static final String BEGIN = "<!-- benchmark-results:begin -->";

	static final String END = "<!-- benchmark-results:end -->";

	static final String GOALS_BEGIN = "<!-- benchmark-goals:begin -->";

	static final String GOALS_END = "<!-- benchmark-goals:end -->";

	/** Forks and measured iterations of the two-threads-one-key run: the issue asks for {@code -f 3 -i 10} or longer. */
	private static final int HOT_KEY_FORKS = 3;

	private static final int HOT_KEY_ITERATIONS = 10;

	/**
	 * The start-up part's variants, every one the benchmark has: Bucket4j's starter beside ours, in the same
	 * run, as issue 31 asks (reported as not run, with its cause, while it does
	 * not start on this Spring Boot).
	 */
	static final String STARTUP_CASES = String.join(",", StartupBenchmark.CASES);

	/**
	 * The longest warm-up, in seconds, of a server JVM whose goals are
	 * throughput ratios (the reactive part, the gateway part, the http part's
	 * Redis mode), against 180 for the CPU goal's. On this machine a JVM's JIT
	 * settles after 40 to 60 s (see {@link HttpBenchmark.Settings#WARMED_JVM});
	 * measured while it still compiles, the variant
	 * with more code to compile, the limiter's, is the one slowed, so a ratio
	 * met is met.
	 */
	static final String THROUGHPUT_MAX_WARMUP = "60";

	/**
	 * Measured iterations (of 1 s, after 3 of warm-up, one fork) of each case of
	 * the in-memory table; the two-threads-one-key goal has its own longer run.
	 */
	private static final int MEMORY_ITERATIONS = 4;

	/** Each part's name and minutes, in the order run. */
	private static final List<String> DURATIONS = new ArrayList<>();

	/**
	 * Rounds of each HTTP and gateway part (see {@link #httpArguments}): an odd
	 * number, so that the median round is a round.
	 */
	static final int HTTP_ROUNDS = 5;

	private RunAllBenchmarks() {
	}

	public static void main(String[] args) throws Exception {
		Options options = Options.parse(args);
		boolean quick = Boolean.parseBoolean(options.string("quick", "false"));
		List<String> parts = options.list("parts",
				"memory,redis,lua,http,reactive,gateway,startup,accuracy,overload,adaptive");
		String docs = options.string("docs", "docs/performance.md");
		String notebook = options.string("notebook", "benchmarks/NOTEBOOK.md");
		long began = System.nanoTime();
		Goals goals = new Goals();
		String machine = Machine.describe();
		StringBuilder results = new StringBuilder();
		results.append(machine).append('\n');

		part(parts, "memory", goals, results, () -> {
			List<InMemoryRow> rows = new ArrayList<>();
			for (int threads : new int[] { 1, 2 }) {
				rows.addAll(inMemory(InMemoryDecisionBenchmark.class.getName() + "\\.", threads, 1, quick ? 1 : 3,
						quick ? 2 : MEMORY_ITERATIONS));
			}
			results.append("### In-memory decision\n\n").append(InMemoryRow.table(rows)).append('\n');
			goals.inMemory(rows);
			// The contended case again, long enough for error bars that tell the two apart.
			List<InMemoryRow> hot = inMemory(InMemoryDecisionBenchmark.class.getName() + "\\.(ours|bucket4jLockFree)$",
					2, quick ? 1 : HOT_KEY_FORKS, quick ? 1 : 5, quick ? 2 : HOT_KEY_ITERATIONS, "keys", "1");
			results.append("### In-memory: two threads on one hot key\n\n")
				.append(InMemoryRow.table(hot))
				.append(String.format(Locale.ROOT, "%n%d forks × %d iterations of 1 s after 5 of warm-up; ± is JMH's "
						+ "99.9%% interval.%n%n", quick ? 1 : HOT_KEY_FORKS, quick ? 2 : HOT_KEY_ITERATIONS));
			goals.hotKey(hot);
		});
		part(parts, "redis", goals, results, () -> {
			// RedisDecisionBenchmark's defaults: 3 rounds of 2 s a case, at 1, 64 and 256 callers, Redis pinned to
			// its own CPU and the callers to the other.
			Options redis = Options.parse(new String[] { "--seconds", quick ? "2" : "6", "--warmup", quick ? "1" : "3",
					"--threads", "1,64,256" });
			List<RedisDecisionBenchmark.Result> rows = RedisDecisionBenchmark.run(redis);
			results.append("### Redis decision\n\n").append(RedisDecisionBenchmark.table(rows)).append('\n')
				.append("### Redis decision: admissions beyond a binding limit\n\n")
				.append(RedisDecisionBenchmark.exactnessTable(RedisDecisionBenchmark.exactness)).append('\n');
			goals.redis(rows, RedisDecisionBenchmark.exactness);
		});
		part(parts, "lua", goals, results, () -> {
			// 100,000 requests a case and round (200,000 alone) and 10,000 under callgrind (20,000): the server
			// time per call moved by under 0.3 µs between two rounds, the instructions per call by under 0.2%.
			Options lua = Options.parse(quick ? new String[] { "--requests", "20000", "--rounds", "1" }
					: new String[] { "--instructions", "true", "--requests", "100000", "--instruction-requests",
							"10000" });
			List<RedisServerTimeBenchmark.Row> rows = RedisServerTimeBenchmark.run(lua);
			results.append("### Redis server time per decision\n\n").append(RedisServerTimeBenchmark.table(rows))
				.append('\n');
			goals.serverTime(rows);
		});
		part(parts, "http", goals, results, () -> {
			// The memory modes with a variant that records no traces, so that what traces cost is measured in
			// the same rounds, two JVMs per variant: the CPU goal is within the 2-4 us the start order moves.
			// The Redis mode, a throughput ratio, with one JVM per variant, no ablation and a shorter warm-up
			// (see THROUGHPUT_MAX_WARMUP): each JVM's warm-up until its JIT settles (up to 100 s here) costs more
			// than its rounds.
			HttpBenchmark.Settings memory = HttpBenchmark.Settings.from(Options.parse(httpArguments(quick, "--modes",
					"cpu,saturated", "--ablations", HttpBenchmark.NO_TRACES + "=--rate-limit.observations.enabled=false")));
			HttpBenchmark.Settings redis = HttpBenchmark.Settings.from(Options.parse(httpArguments(quick, "--modes",
					"redis", "--jvms", "1", "--max-warmup", THROUGHPUT_MAX_WARMUP)));
			List<HttpBenchmark.Row> rows = new ArrayList<>(HttpBenchmark.run(memory));
			rows.addAll(HttpBenchmark.run(redis));
			results.append("### HTTP\n\n").append(HttpBenchmark.table(rows, memory)).append('\n');
			goals.http(rows);
		});
		part(parts, "reactive", goals, results, () -> {
			HttpBenchmark.Settings http = HttpBenchmark.Settings.from(Options.parse(reactiveArguments(quick)));
			List<HttpBenchmark.Row> rows = HttpBenchmark.run(http);
			results.append("### HTTP, reactive (WebFlux)\n\n").append(HttpBenchmark.table(rows, http)).append('\n');
			goals.http(rows, WebStack.REACTIVE);
		});
		part(parts, "gateway", goals, results, () -> results.append(GatewayBenchmark.part(quick, goals)));
		part(parts, "startup", goals, results, () -> {
			// 9 starts a variant: one start's CPU moves by 20-30% on this machine, a median of 5 by several percent,
			// the size of the goal itself.
			StartupBenchmark.Settings startup = StartupBenchmark.Settings
				.from(Options.parse(quick ? new String[] { "--runs", "2", "--warmup-runs", "1", "--cases", STARTUP_CASES }
						: new String[] { "--runs", "9", "--cases", STARTUP_CASES }));
			List<StartupBenchmark.Row> rows = StartupBenchmark.run(startup);
			results.append("### Start-up of the sample app\n\n").append(StartupBenchmark.table(rows, startup))
				.append('\n');
			goals.startup(rows);
		});
		part(parts, "accuracy", goals, results, () -> {
			// 5 s a rate (at least 200 tokens, so 20 s at 10/s) and a fleet case (10 s alone): one token is at
			// most 0.5% of a run, and the errors of 10-s runs were under 0.1% except at 10/s.
			Options accuracy = Options.parse(quick ? new String[] { "--seconds", "2", "--fleet-seconds", "2" }
					: new String[] { "--seconds", "5", "--fleet-seconds", "5" });
			AccuracyBenchmark.Report report = AccuracyBenchmark.run(accuracy);
			results.append("### Accuracy: admitted rate against the configured rate\n\n")
				.append(AccuracyBenchmark.rateTable(report.rates()))
				.append('\n')
				.append("### Accuracy: 4 instances × 64 threads on one key\n\n")
				.append(AccuracyBenchmark.fleetTable(report.fleet()))
				.append('\n');
			goals.accuracy(report);
		});

		part(parts, "overload", goals, results, () -> {
			OverloadBenchmark.Report report = OverloadBenchmark.run(SampleAppProcess.locateJar(null),
					CpuPinning.of("auto"), quick ? 5 : 30, 64, quick ? 3 : 20, 2, null);
			results.append(report.toMarkdown()).append('\n');
			goals.overload(report);
		});

		part(parts, "adaptive", goals, results, () -> {
			// The starter's adaptive cap alone (the experiment's page compares it with no cap and Netflix's).
			Options adaptive = Options.parse(new String[] { "--modes", "adaptive", "--out", "none", "--seconds",
					quick ? "5" : "15", "--warmup", quick ? "2" : "5", "--adaptive",
					"rtt-tolerance=1,queue-size=1,min-limit=12,long-window=5000" });
			List<AdaptiveCapExperiment.Row> rows = AdaptiveCapExperiment.run(adaptive, "").get("adaptive");
			results.append("### Adaptive cap under a retry storm\n\n")
				.append("`AdaptiveCapExperiment --modes adaptive` (see [the experiment](../docs/adaptive-experiment.md) for the ")
				.append("setup and the comparison with no cap and Netflix's limiter).\n\n| load | goodput/s | critical served | ")
				.append("critical p99 ms |\n|---|---:|---:|---:|\n");
			for (AdaptiveCapExperiment.Row row : rows) {
				results.append(String.format(Locale.ROOT, "| %s× | %.0f | %.2f%% | %.1f |%n",
						AdaptiveCapReport.loadLabel(row.load()), row.result().goodput(),
						100 * row.result().servedShare(true), row.result().latencyMillis(true, 0.99)));
			}
			results.append('\n');
			goals.adaptive(rows);
		});

		double minutes = (System.nanoTime() - began) / 60e9;
		String generated = "Generated on " + LocalDate.now(ZoneOffset.UTC) + " by `RunAllBenchmarks`"
				+ (quick ? " **with `--quick true` (short runs; not for quoting)**" : "") + " in "
				+ String.format(Locale.ROOT, "%.1f", minutes) + " minutes (parts, in minutes: "
				+ String.join(", ", DURATIONS) + ").\n\n";
		String section = generated + "### Goals\n\n" + goals.table() + '\n' + results;
		System.out.println();
		System.out.println(section);
		if (!docs.equals("none")) {
			// Both pages' markers are checked before either is written: one missing leaves both as they were.
			String notebookText = between(Path.of(notebook), BEGIN, END, section);
			String docsText = between(Path.of(docs), GOALS_BEGIN, GOALS_END, generated + goals.table() + '\n' + machine);
			Files.writeString(Path.of(notebook), notebookText, StandardCharsets.UTF_8);
			Files.writeString(Path.of(docs), docsText, StandardCharsets.UTF_8);
			System.out.println("Wrote the results into " + notebook + " and the goals into " + docs);
		}
	}

	/**
	 * The options of the {@code http} part's runs: {@code HttpBenchmark}'s
	 * defaults but {@value #HTTP_ROUNDS} rounds (10 alone): each variant's
	 * warm-up until its JIT settles costs more than its rounds.
	 */
	static String[] httpArguments(boolean quick, String... more) {
		List<String> arguments = new ArrayList<>(List.of(more));
		arguments.addAll(quick ? List.of("--seconds", "3", "--warmup", "2", "--rounds", "1")
				: List.of("--rounds", Integer.toString(HTTP_ROUNDS)));
		return arguments.toArray(String[]::new);
	}

	/**
	 * The options of the {@code reactive} part: the WebFlux sample's throughput
	 * with the limiter against without (memory) and against one INCR per request
	 * (Redis), pinned, as {@code HttpBenchmark} takes them, so that the part and
	 * {@code HttpBenchmark --stack reactive --modes saturated,redis --jvms 1 --rounds 5 --max-warmup 60}
	 * measure the same thing. The {@code cpu} mode (server CPU at a fixed rate) is the
	 * servlet stack's goal and stays out of it; so does the second JVM per variant,
	 * which guards that goal against the start order's 2–4 µs and would double the
	 * part's 20 minutes for throughput ratios it moves by a few per cent.
	 */
	static String[] reactiveArguments(boolean quick) {
		List<String> arguments = new ArrayList<>(List.of("--stack", "reactive", "--modes", "saturated,redis"));
		arguments.addAll(quick ? List.of("--seconds", "3", "--warmup", "2", "--rounds", "1")
				: List.of("--jvms", "1", "--rounds", Integer.toString(HTTP_ROUNDS), "--max-warmup",
						THROUGHPUT_MAX_WARMUP));
		return arguments.toArray(String[]::new);
	}

	/** One part of the run: its body measures, appends its tables and checks its goals. */
	@FunctionalInterface
	private interface Part {

		void run() throws Exception;

	}

	/**
	 * Runs a part if it was asked for. A part that fails is a goal missed, with
	 * its reason, and the run goes on: one broken harness must not throw away the
	 * other parts' figures, which are only comparable as one run.
	 */
	private static void part(List<String> parts, String name, Goals goals, StringBuilder results, Part part) {
		if (!parts.contains(name)) {
			return;
		}
		long began = System.nanoTime();
		try {
			part.run();
		}
		catch (Exception | AssertionError ex) {
			ex.printStackTrace();
			goals.failed(name, ex);
			results.append("### Part ").append(name).append(" failed\n\n`").append(ex).append("`\n\n");
		}
		finally {
			DURATIONS.add(String.format(Locale.ROOT, "%s %.1f", name, (System.nanoTime() - began) / 60e9));
		}
	}

	private static List<InMemoryRow> inMemory(String include, int threads, int forks, int warmups, int iterations,
			String... param) throws Exception {
		OptionsBuilder builder = new OptionsBuilder();
		builder.include(include)
			.forks(forks)
			.threads(threads)
			.warmupIterations(warmups)
			.warmupTime(TimeValue.seconds(1))
			.measurementIterations(iterations)
			.measurementTime(TimeValue.seconds(1))
			.addProfiler(GCProfiler.class);
		if (param.length == 2) {
			builder.param(param[0], param[1]);
		}
		org.openjdk.jmh.runner.options.Options jmh = builder.build();
		Collection<RunResult> runs = new Runner(jmh).run();
		List<InMemoryRow> rows = new ArrayList<>();
		for (RunResult run : runs) {
			String benchmark = run.getParams().getBenchmark();
			var allocation = run.getSecondaryResults().get("gc.alloc.rate.norm");
			rows.add(new InMemoryRow(benchmark.substring(benchmark.lastIndexOf('.') + 1), threads,
					Integer.parseInt(run.getParams().getParam("keys")), run.getPrimaryResult().getScore(),
					run.getPrimaryResult().getScoreError(), (allocation != null) ? allocation.getScore() : Double.NaN));
		}
		return rows;
	}

	/** The page's text with the section between its markers, failing if they are missing. */
	static String between(Path page, String beginMarker, String endMarker, String section) throws IOException {
		String text = Files.readString(page, StandardCharsets.UTF_8);
		int begin = text.indexOf(beginMarker);
		int end = text.indexOf(endMarker);
		if (begin < 0 || end < begin) {
			throw new IllegalStateException(page + " has no " + beginMarker + " ... " + endMarker
					+ " section to write into; run from the repository root or pass --docs and --notebook");
		}
		return text.substring(0, begin + beginMarker.length()) + "\n\n" + section.strip() + "\n\n"
				+ text.substring(end);
	}

}
