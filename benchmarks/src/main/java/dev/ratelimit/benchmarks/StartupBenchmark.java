package dev.ratelimit.benchmarks;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Start-up cost of the starter: CPU seconds and wall time of the sample app's
 * JVM from its launch until {@code GET /api/hello} first answers 200, in
 * variants started alternately in one run:
 * <ul>
 * <li>{@code starter}: the sample app as built (route rule {@code /api/** -> per-ip},
 * annotated controllers, provider client, actuator endpoint);</li>
 * <li>{@code disabled}: the same jar with {@code rate-limit.enabled=false};</li>
 * <li>{@code without}: a copy of the jar without the starter ({@link StarterJars#without});</li>
 * <li>{@code aot}: the jar as built, started with {@code -Dspring.aot.enabled=true}: the bean definitions
 * Spring AOT generated when the sample was built ({@code process-aot}), instead of those found at start-up
 * (compared with {@code without} on the JVM, as the copy without the starter cannot start in AOT mode:
 * its generated code names the starter's beans);</li>
 * <li>{@code bucket4j}, only when asked for ({@code --cases}): that copy with
 * Bucket4j's Spring Boot starter limiting the same route the same way
 * ({@link Bucket4jStarter}), checked to answer 429 once its 20 tokens are
 * spent (after the measured start). Bucket4j's starter 0.12.10, the newest
 * that resolves here, does not start on Spring Boot 4: the variant is then
 * reported, with the cause the app logged, instead of stopping the run;</li>
 * <li>{@code resilience4j}, only when asked for: that copy with Resilience4j's
 * Spring Boot starter and one rate limiter configured at the route rule's rate
 * ({@link Resilience4jStarter}), checked to list it on its actuator endpoint
 * (after the measured start). It limits annotated methods only, so nothing on
 * {@code /api/hello}: what it shows is the start-up cost its starter adds.
 * Its {@code resilience4j-spring-boot3} 2.4.0, the newest that resolves here,
 * refuses to start on Spring Boot 4: reported as {@code bucket4j} is.</li>
 * </ul>
 * Or, with {@code --starter-from sample-app.jar}, the other way round for an
 * application built without the starter (Spring PetClinic): {@code without} is
 * its jar as built, {@code starter} and {@code disabled} a copy with the
 * starter's jars added ({@link StarterJars#with}); then {@code --path} names
 * the page polled and {@code --expect-header false} says that no route rule
 * answers it.
 * CPU is the JVM process's user plus system time ({@code utime + stime} of
 * {@code /proc/<pid>/stat}, {@link ProcessCpu}) taken as soon as the first 200
 * arrives: every thread of the JVM (main, JIT compilers, GC) and the first
 * request included, nothing of the benchmark's own process; the main thread's
 * and the JIT compilers' shares are shown beside it, and the classes it loaded
 * by then ({@link LoadedClasses}). Each variant reports the median of its runs,
 * and its fastest start against the fastest start without the starter.
 * Several jars can be compared in one run ({@code --jars before=a.jar,after=b.jar}),
 * each with its own three variants.
 * <p>
 * Run: {@code java -cp benchmarks/target/benchmarks.jar dev.ratelimit.benchmarks.StartupBenchmark
 * [--runs 7] [--warmup-runs 1] [--cases starter,disabled,without,aot[,bucket4j][,resilience4j]]
 * [--app-jar path | --jars label=path,...]
 * [--starter-from path | label=path,...] [--path /api/hello] [--expect-header true]
 * [--jvm "-Xms512m -Xmx512m -XX:+UseG1GC"]}.
 * Other code calls {@link #run(Settings)}.
 */
public final class StartupBenchmark {

	/** The path polled until it answers by default: the one the HTTP benchmark measures, behind the route rule. */
	static final String PATH = HttpBenchmark.PATH;

	/** The goal of the issue: the starter adds less than this share of the start-up CPU without it. */
	public static final double GOAL_SHARE = 0.03;

	/** Often enough that waiting adds little to the wall time; a refused connection costs the app nothing. */
	private static final long POLL_MILLIS = 10;

	/** The variants, in the order of the table. */
	public static final List<String> CASES = List.of("starter", "disabled", "without", "aot", "bucket4j",
			"resilience4j");

	/**
	 * The variants of other libraries' starters, added to the copy without ours: that one fails to start on this
	 * Spring Boot is a result to report, not an error of the benchmark.
	 */
	static final List<String> OTHER_STARTERS = List.of("bucket4j", "resilience4j");

	/**
	 * The variants run unless {@code --cases} says otherwise: not {@code bucket4j} nor {@code resilience4j},
	 * whose starters do not start on this Spring Boot (a failed start each run, to report what is known); back
	 * in once one does.
	 */
	public static final List<String> DEFAULT_CASES = List.of("starter", "disabled", "without", "aot");

	/** The JVM option that starts an application processed ahead of time on its generated bean definitions. */
	static final String AOT_OPTION = "-Dspring.aot.enabled=true";

	private StartupBenchmark() {
	}

	/**
	 * What to run.
	 *
	 * @param runs measured starts per variant and jar; each variant reports their median
	 * @param warmupRuns starts per variant and jar before those, not recorded (they fill the
	 * page cache and the JVM's shared archive)
	 * @param cases a subset of {@link #CASES}; {@code bucket4j} and {@code resilience4j} only for the sample app
	 * (no {@code starterFrom})
	 * @param jars the app jars, by label, in order; a {@code null} path means the sample app's in
	 * {@code sample-app/target}
	 * @param starterFrom empty when the jars have the starter; else they were built without it, and the
	 * sample app jar given for their label (or for {@code *}, every label) gives the starter's jars to add
	 * @param path the path polled until it answers 200
	 * @param expectHeader whether, with the starter, that answer carries a {@code RateLimit-Policy} header
	 * field (a route rule applies to it; the sample app's {@code /api/hello} does)
	 * @param jvmOptions the app JVM's options, the same for every start
	 */
	public record Settings(int runs, int warmupRuns, List<String> cases, Map<String, String> jars,
			Map<String, String> starterFrom, String path, boolean expectHeader, List<String> jvmOptions) {

		/** About 9 minutes on 2 cores: 8 starts of each of the three variants, stops included. */
		public static Settings defaults() {
			Map<String, String> jars = new LinkedHashMap<>();
			jars.put("this build", null);
			return new Settings(7, 1, DEFAULT_CASES, jars, Map.of(), PATH, true, HttpBenchmark.Settings.DEFAULT_JVM);
		}

		/**
		 * Reads {@code --runs}, {@code --warmup-runs}, {@code --cases}, {@code --app-jar} or
		 * {@code --jars label=path,...}, {@code --starter-from}, {@code --path}, {@code --expect-header}
		 * and {@code --jvm} (space-separated options).
		 * @param given the parsed command line
		 * @return the settings
		 */
		static Settings from(Options given) {
			Settings d = defaults();
			List<String> cases = new ArrayList<>(given.list("cases", String.join(",", d.cases())));
			for (String name : cases) {
				if (!CASES.contains(name)) {
					throw new IllegalArgumentException("--cases takes " + CASES + ", got " + name);
				}
			}
			Map<String, String> jars = new LinkedHashMap<>();
			String list = given.string("jars", null);
			if (list != null) {
				jars.putAll(labelled("jars", list));
			}
			else {
				jars.put("this build", given.string("app-jar", null));
			}
			String donors = given.string("starter-from", null);
			Map<String, String> starterFrom = (donors == null) ? Map.of()
					: donors.contains("=") ? labelled("starter-from", donors) : Map.of("*", donors);
			if (!starterFrom.isEmpty() && given.string("cases", null) == null) {
				// The starter added to a jar built without it: its AOT code, if any, knows nothing of the starter.
				cases.remove("aot");
			}
			if (!starterFrom.isEmpty() && cases.contains("aot")) {
				throw new IllegalArgumentException("--cases aot starts a jar processed with the starter: not with --starter-from");
			}
			if (!starterFrom.isEmpty() && cases.contains("bucket4j")) {
				// Its filter is configured for the sample's /api/**, a route other apps do not have.
				throw new IllegalArgumentException("--cases bucket4j limits the sample app's /api/**: not with --starter-from");
			}
			if (!starterFrom.isEmpty() && cases.contains("resilience4j")) {
				// Added to the sample's copy without our starter, its endpoints exposed beside the sample's.
				throw new IllegalArgumentException("--cases resilience4j is added to the sample app: not with --starter-from");
			}
			String jvm = given.string("jvm", null);
			return new Settings(given.integer("runs", d.runs()), given.integer("warmup-runs", d.warmupRuns()), cases,
					jars, starterFrom, given.string("path", d.path()),
					Boolean.parseBoolean(given.string("expect-header", Boolean.toString(d.expectHeader()))),
					(jvm != null) ? List.of(jvm.trim().split("\\s+")) : d.jvmOptions());
		}

		private static Map<String, String> labelled(String option, String list) {
			Map<String, String> paths = new LinkedHashMap<>();
			for (String item : list.split(",")) {
				int equals = item.indexOf('=');
				if (equals <= 0) {
					throw new IllegalArgumentException("--" + option + " takes label=path,..., got " + item);
				}
				paths.put(item.substring(0, equals), item.substring(equals + 1));
			}
			return paths;
		}

		/** The sample app jar giving the starter to the app of a label, or {@code null} if the app has it. */
		String starterFor(String label) {
			return this.starterFrom.getOrDefault(label, this.starterFrom.get("*"));
		}

	}

	/**
	 * One variant's result: medians of its runs, and the spread of the total.
	 *
	 * @param jar the label of the app jar
	 * @param variant {@code starter}, {@code disabled}, {@code without}, {@code aot}, {@code bucket4j} or
	 * {@code resilience4j}
	 * @param cpuSeconds median CPU seconds of the JVM (all threads) until it answered
	 * @param cpuMin the fewest CPU seconds of a run
	 * @param cpuMax the most CPU seconds of a run
	 * @param mainSeconds median CPU seconds of the main thread
	 * @param jitSeconds median CPU seconds of the JIT compiler threads
	 * @param wallSeconds median seconds from launch to the first answer
	 * @param wallMin the shortest run
	 * @param wallMax the longest run
	 * @param runs the runs measured
	 * @param classes median classes loaded by the first answer (-1 when they could not be read)
	 * @param cpuShare the median CPU over the same jar's {@code without}, minus 1 (NaN for {@code without})
	 * @param fastestShare the fewest CPU seconds of a run over the same jar's {@code without}'s, minus 1
	 * @param classesShare the classes over the same jar's {@code without}'s, minus 1
	 * @param mainShare the same for the main thread
	 * @param wallShare the same for the wall time
	 * @param failure why the variant could not be measured (its figures are then NaN), or {@code null}
	 */
	public record Row(String jar, String variant, double cpuSeconds, double cpuMin, double cpuMax, double mainSeconds,
			double jitSeconds, double wallSeconds, double wallMin, double wallMax, int runs, double classes,
			double cpuShare, double fastestShare, double classesShare, double mainShare, double wallShare,
			String failure) {

		static Row failed(String jar, String variant, String failure) {
			double n = Double.NaN;
			return new Row(jar, variant, n, n, n, n, n, n, n, n, 0, n, n, n, n, n, n, failure);
		}

		Row comparedTo(Row without) {
			return new Row(this.jar, this.variant, this.cpuSeconds, this.cpuMin, this.cpuMax, this.mainSeconds,
					this.jitSeconds, this.wallSeconds, this.wallMin, this.wallMax, this.runs, this.classes,
					this.cpuSeconds / without.cpuSeconds - 1, this.cpuMin / without.cpuMin - 1,
					(this.classes > 0 && without.classes > 0) ? this.classes / without.classes - 1 : Double.NaN,
					this.mainSeconds / without.mainSeconds - 1, this.wallSeconds / without.wallSeconds - 1,
					this.failure);
		}

	}

	public static void main(String[] args) throws Exception {
		Settings settings = Settings.from(Options.parse(args));
		List<Row> rows = run(settings);
		System.out.println();
		System.out.print(table(rows, settings));
		for (Row row : rows) {
			if (row.variant().equals("starter") && !Double.isNaN(row.cpuShare())) {
				System.out.printf(Locale.ROOT, "%nGoal, %s: the starter adds < %.0f%% of start-up CPU: %s (median "
						+ "%+.1f%%, fastest start %+.1f%%)%n", row.jar(), GOAL_SHARE * 100,
						(row.cpuShare() < GOAL_SHARE) ? "met" : "NOT met", row.cpuShare() * 100,
						row.fastestShare() * 100);
			}
			if (row.variant().equals("bucket4j") && !Double.isNaN(row.cpuShare())) {
				System.out.printf(Locale.ROOT, "For comparison, %s: Bucket4j's starter adds %+.1f%% of start-up CPU%n",
						row.jar(), row.cpuShare() * 100);
			}
			if (row.variant().equals("resilience4j") && !Double.isNaN(row.cpuShare())) {
				System.out.printf(Locale.ROOT, "For comparison, %s: Resilience4j's starter adds %+.1f%% of start-up "
						+ "CPU and %s classes loaded%n", row.jar(), row.cpuShare() * 100,
						Figures.signedPercent(row.classesShare()));
			}
		}
	}

	/**
	 * Starts every variant of every jar, {@code warmupRuns + runs} times each,
	 * in rounds (one start of each variant and jar per round, the order rotated
	 * from round to round, so that none always follows the same one), printing
	 * a line per start. A variant of another library's starter ({@code bucket4j},
	 * {@code resilience4j}) that fails to start or fails its check is not started
	 * again and reported as failed, with the cause.
	 * @param settings what to run
	 * @return one row per jar and variant, in the order of the settings
	 * @throws IllegalStateException if a variant of ours did not answer with the limiter on (or off) as it should
	 */
	public static List<Row> run(Settings settings) {
		List<Variant> variants = new ArrayList<>();
		for (Map.Entry<String, String> jar : settings.jars().entrySet()) {
			variantJars(settings, jar.getKey(), jar.getValue())
				.forEach((name, path) -> variants.add(new Variant(jar.getKey(), name, path)));
		}
		System.out.printf(Locale.ROOT, "%d warm-up and %d measured starts per variant, polling %s every %d ms; JVM %s%n",
				settings.warmupRuns(), settings.runs(), settings.path(), POLL_MILLIS, settings.jvmOptions());
		int rounds = settings.warmupRuns() + settings.runs();
		for (int round = 0; round < rounds; round++) {
			boolean warmup = round < settings.warmupRuns();
			for (int i = 0; i < variants.size(); i++) {
				Variant variant = variants.get((i + round) % variants.size());
				if (variant.failure != null) {
					continue;
				}
				Start start;
				try {
					start = start(variant, settings);
				}
				catch (RuntimeException ex) {
					if (!OTHER_STARTERS.contains(variant.name)) {
						throw ex;
					}
					// Another library's starter: that it fails on this Spring Boot is a result, not an error of ours.
					variant.failure = failure(variant.name, ex);
					System.out.printf(Locale.ROOT, "%-9s %-12s %-12s did not run: %s%n",
							warmup ? "warm-up" : "run " + (round - settings.warmupRuns() + 1), variant.label,
							variant.name, variant.failure);
					continue;
				}
				System.out.printf(Locale.ROOT, "%-9s %-12s %-12s CPU %6.2f s (main thread %5.2f, JIT %5.2f)  wall %6.2f s%n",
						warmup ? "warm-up" : "run " + (round - settings.warmupRuns() + 1), variant.label, variant.name,
						start.cpu.totalSeconds(), start.cpu.mainSeconds(), start.cpu.jitSeconds(), start.wallSeconds);
				if (!warmup) {
					variant.starts.add(start);
				}
			}
		}
		List<Row> rows = new ArrayList<>();
		for (Variant variant : variants) {
			rows.add(variant.row());
		}
		List<Row> compared = new ArrayList<>();
		for (Row row : rows) {
			Row without = rows.stream()
				.filter((other) -> other.jar().equals(row.jar()) && other.variant().equals("without"))
				.findFirst()
				.orElse(null);
			compared.add((without != null && row != without && row.failure() == null) ? row.comparedTo(without) : row);
		}
		return compared;
	}

	/**
	 * The jar of each variant of one app: the app's own and a copy with the
	 * starter taken out or put in ({@link StarterJars}), printed.
	 * @param settings the settings, saying which variants and whether the app has the starter
	 * @param label the app's label
	 * @param configured the app's jar, {@code null} for the sample app's
	 * @return the jar of each variant, in the order of the settings' cases
	 */
	static Map<String, Path> variantJars(Settings settings, String label, String configured) {
		Path path = SampleAppProcess.locateJar(configured);
		String donor = settings.starterFor(label);
		Path other;
		if (donor == null) {
			other = settings.cases().contains("without") ? StarterJars.without(path) : null;
			System.out.printf(Locale.ROOT, "%s: %s%s%n", label, path,
					(other != null) ? " (without the starter: " + other + ")" : "");
		}
		else {
			other = StarterJars.with(path, SampleAppProcess.locateJar(donor));
			System.out.printf(Locale.ROOT, "%s: %s (with the starter of %s: %s)%n", label, path, donor, other);
		}
		Map<String, Path> jars = new LinkedHashMap<>();
		for (String name : settings.cases()) {
			if (name.equals("bucket4j")) {
				if (donor != null) {
					throw new IllegalArgumentException("The bucket4j variant is the sample app's, not " + label + "'s");
				}
				jars.put(name, Bucket4jStarter.jar((other != null) ? other : StarterJars.without(path)));
				continue;
			}
			if (name.equals("resilience4j")) {
				if (donor != null) {
					throw new IllegalArgumentException("The resilience4j variant is the sample app's, not " + label + "'s");
				}
				jars.put(name, Resilience4jStarter.jar((other != null) ? other : StarterJars.without(path)));
				continue;
			}
			boolean withStarter = !name.equals("without");
			boolean built = (donor == null) == withStarter;
			jars.put(name, built ? path : other);
		}
		return jars;
	}

	private static Start start(Variant variant, Settings settings) {
		// The same arguments for ours: with the starter left out, the switch has nothing to switch.
		List<String> arguments = new ArrayList<>(List.of("--rate-limit.enabled=" + !variant.name.equals("disabled")));
		boolean bucket4j = variant.name.equals("bucket4j");
		if (bucket4j) {
			arguments.addAll(Bucket4jStarter.ARGUMENTS);
		}
		boolean resilience4j = variant.name.equals("resilience4j");
		if (resilience4j) {
			arguments.addAll(Resilience4jStarter.ARGUMENTS);
		}
		boolean aot = variant.name.equals("aot");
		List<String> jvmOptions = new ArrayList<>(settings.jvmOptions());
		if (aot) {
			jvmOptions.add(AOT_OPTION);
		}
		long began = System.nanoTime();
		SampleAppProcess.Started started = SampleAppProcess.start(variant.path, jvmOptions, arguments,
				settings.path(), POLL_MILLIS);
		long wall = System.nanoTime() - began;
		try (SampleAppProcess app = started.app()) {
			// At once: the app idles after its first answer, but its compiler threads go on for a while.
			ProcessCpu cpu = ProcessCpu.of(app.pid());
			// Read from outside the JVM, after its CPU: the count costs the app nothing.
			long classes = LoadedClasses.of(app.pid());
			checkLimiter((variant.name.equals("starter") || aot) && settings.expectHeader(), settings.path(),
					started.firstResponse());
			if (bucket4j) {
				Bucket4jStarter.checkLimits(app.port(), settings.path(), started.firstResponse());
			}
			if (resilience4j) {
				Resilience4jStarter.checkRegistry(app.port());
			}
			return new Start(cpu, wall / 1e9, classes);
		}
	}

	/** Why a start failed, in one line: the cause the app logged if it did not start, else the exception's message. */
	private static String failure(String variant, RuntimeException ex) {
		String cause = null;
		if (ex instanceof SampleAppProcess.NotReady notReady) {
			cause = variant.equals("resilience4j") ? Resilience4jStarter.cause(notReady.log())
					: Bucket4jStarter.cause(notReady.log());
		}
		if (cause != null) {
			return cause;
		}
		String message = String.valueOf(ex.getMessage());
		int newline = message.indexOf('\n');
		return (newline > 0) ? message.substring(0, newline) : message;
	}

	/**
	 * The route rule's header field proves the limiter served the first request; its absence proves it did not.
	 * @param limiter whether the header field is expected
	 * @param path the path asked
	 * @param policy the answer's {@code RateLimit-Policy} field, or {@code null}
	 */
	static void checkLimiter(boolean limiter, String path, String policy) {
		if (limiter && policy == null) {
			throw new IllegalStateException("With the starter, " + path + " answered without a RateLimit-Policy header");
		}
		if (!limiter && policy != null) {
			throw new IllegalStateException("Without the limiter, " + path + " answered RateLimit-Policy: " + policy);
		}
	}

	private static void checkLimiter(boolean limiter, String path, HttpConnection.Response response) {
		checkLimiter(limiter, path, response.header("RateLimit-Policy"));
	}

	/**
	 * The rows as a Markdown table.
	 * @param rows what {@link #run(Settings)} returned
	 * @param settings the settings of the run, named below the table
	 * @return the table, ending with a newline
	 */
	public static String table(List<Row> rows, Settings settings) {
		StringBuilder out = new StringBuilder();
		boolean severalJars = settings.jars().size() > 1;
		out.append(severalJars ? "| App jar " : "")
			.append("| Variant | CPU s | CPU s min–max | CPU vs without | Fastest vs without | Classes "
					+ "| Classes vs without | Main thread s | Main vs without | JIT s | Wall s | Wall s min–max "
					+ "| Wall vs without |\n");
		out.append(severalJars ? "|---" : "")
			.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
		for (Row r : rows) {
			out.append(severalJars ? "| " + r.jar() + " " : "");
			if (r.failure() != null) {
				out.append("| ").append(r.variant()).append(" | did not run (below) | | | | | | | | | | | |\n");
				continue;
			}
			out.append(String.format(Locale.ROOT,
					"| %s | %.2f | %.2f–%.2f | %s | %s | %s | %s | %.2f | %s | %.2f | %.2f | %.2f–%.2f | %s |%n",
					r.variant(), r.cpuSeconds(), r.cpuMin(), r.cpuMax(), Figures.signedPercent(r.cpuShare()),
					Figures.signedPercent(r.fastestShare()), (r.classes() > 0) ? String.format(Locale.ROOT, "%.0f",
							r.classes()) : "n/a", Figures.signedPercent(r.classesShare()), r.mainSeconds(),
					Figures.signedPercent(r.mainShare()), r.jitSeconds(), r.wallSeconds(), r.wallMin(), r.wallMax(),
					Figures.signedPercent(r.wallShare())));
		}
		out.append(String.format(Locale.ROOT,
				"%nApp from launch to its first 200 on %s; CPU is the JVM's user + system time then "
						+ "(/proc/<pid>/stat: all threads, the first request included), main thread and JIT compiler "
						+ "threads from /proc/<pid>/task, classes loaded by then from jstat -class; medians of %d "
						+ "starts per variant (fastest: the fewest CPU seconds of a variant's starts over the fewest "
						+ "without the starter), after %d warm-up start(s), variants alternating; JVM %s; aot: the same "
						+ "jar started with " + AOT_OPTION + ", compared with the JVM start without the starter.%n",
				settings.path(), settings.runs(), settings.warmupRuns(), String.join(" ", settings.jvmOptions())));
		for (Row r : rows) {
			if (r.variant().equals("bucket4j")) {
				out.append(String.format(Locale.ROOT, "%n%s: the copy without our starter, with Bucket4j's Spring Boot "
						+ "starter %s limiting /api/** per client IP to 20, refilled 10 per second (Caffeine behind "
						+ "JCache)%s%n", r.variant(), Bucket4jStarter.version(),
						(r.failure() == null) ? ", checked to answer 429 once the 20 are spent."
								: "; it did not run: " + r.failure()));
			}
			if (r.variant().equals("resilience4j")) {
				out.append(String.format(Locale.ROOT, "%n%s: the copy without our starter, with Resilience4j's Spring "
						+ "Boot starter (resilience4j-spring-boot3 %s, AspectJ's weaver) and one rate limiter, %s, "
						+ "of 10 per 1 s period; it limits annotated methods only, so nothing on %s: its start-up "
						+ "cost alone%s%n", r.variant(), Resilience4jStarter.version(), Resilience4jStarter.INSTANCE,
						settings.path(), (r.failure() == null) ? ", checked to list " + Resilience4jStarter.INSTANCE
								+ " on " + Resilience4jStarter.ENDPOINT + "." : "; it did not run: " + r.failure()));
			}
		}
		return out.toString();
	}

	private record Start(ProcessCpu cpu, double wallSeconds, long classes) {
	}

	private static final class Variant {

		final String label;

		final String name;

		final Path path;

		final List<Start> starts = new ArrayList<>();

		/** Why it could not be measured, once a start failed (only those of {@link #OTHER_STARTERS} may). */
		String failure;

		Variant(String label, String name, Path path) {
			this.label = label;
			this.name = name;
			this.path = path;
		}

		Row row() {
			if (this.failure != null) {
				return Row.failed(this.label, this.name, this.failure);
			}
			double[] cpu = this.starts.stream().mapToDouble((start) -> start.cpu().totalSeconds()).toArray();
			double[] main = this.starts.stream().mapToDouble((start) -> start.cpu().mainSeconds()).toArray();
			double[] jit = this.starts.stream().mapToDouble((start) -> start.cpu().jitSeconds()).toArray();
			double[] wall = this.starts.stream().mapToDouble(Start::wallSeconds).toArray();
			double[] classes = this.starts.stream().mapToDouble(Start::classes).toArray();
			return new Row(this.label, this.name, Figures.median(cpu), Arrays.stream(cpu).min().orElse(Double.NaN),
					Arrays.stream(cpu).max().orElse(Double.NaN), Figures.median(main), Figures.median(jit),
					Figures.median(wall),
					Arrays.stream(wall).min().orElse(Double.NaN), Arrays.stream(wall).max().orElse(Double.NaN),
					this.starts.size(), Figures.median(classes), Double.NaN, Double.NaN, Double.NaN, Double.NaN,
					Double.NaN, null);
		}

	}

}
