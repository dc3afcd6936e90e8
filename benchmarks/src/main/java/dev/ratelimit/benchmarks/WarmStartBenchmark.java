package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;

/**
 * The starter's own start-up work, with class loading and JIT compilation out
 * of the way: the sample app started, asked {@code GET /api/hello} once and
 * closed, many times over in one JVM ({@link RestartDriver}), and the CPU time
 * of the calling thread per start taken once the JVM is warm. What the
 * cold start ({@link StartupBenchmark}) measures is the real cost; this
 * measures the part of it the starter's code does itself (conditions, bean
 * creation, pointcut matching, scans, the report), steadily enough to tell a
 * change of a few percent on a busy machine, where the cold figures swing by
 * tens of percent with the compiler threads. Spring's own caches stay warm from
 * one start to the next, so this understates annotation searches done by
 * Spring rather than cached by the starter.
 * <p>
 * The same three variants as {@link StartupBenchmark}, each variant's JVM run
 * {@code rounds} times, variants alternating. The class path is the app jar's
 * {@code BOOT-INF/classes} and {@code BOOT-INF/lib}, unpacked.
 * <p>
 * Run: {@code java -cp benchmarks/target/benchmarks.jar dev.ratelimit.benchmarks.WarmStartBenchmark
 * [--restarts 20] [--warmup 10] [--rounds 2]} and the options of {@link StartupBenchmark} that say what
 * to start ({@code --cases}, {@code --app-jar} or {@code --jars}, {@code --starter-from}, {@code --path},
 * {@code --expect-header}, {@code --jvm}).
 */
public final class WarmStartBenchmark {

	private WarmStartBenchmark() {
	}

	/**
	 * What to run.
	 *
	 * @param restarts starts per JVM
	 * @param warmup of those, the first ones not recorded
	 * @param rounds JVMs per variant and jar, variants alternating
	 * @param startup which apps and variants, the path asked and the JVM options, as for the cold starts
	 */
	public record Settings(int restarts, int warmup, int rounds, StartupBenchmark.Settings startup) {

		/** About 6 minutes on 2 cores. */
		public static Settings defaults() {
			return new Settings(20, 10, 2, StartupBenchmark.Settings.defaults());
		}

		/**
		 * Reads {@code --restarts}, {@code --warmup} and {@code --rounds}, and the options of
		 * {@link StartupBenchmark.Settings#from} that say what to start.
		 */
		static Settings from(Options given) {
			Settings d = defaults();
			StartupBenchmark.Settings startup = StartupBenchmark.Settings.from(given);
			if (startup.cases().contains("bucket4j")) {
				// Its limit is given as application arguments, which RestartDriver's starts do not pass.
				throw new IllegalArgumentException("--cases bucket4j is StartupBenchmark's only");
			}
			return new Settings(given.integer("restarts", d.restarts()), given.integer("warmup", d.warmup()),
					given.integer("rounds", d.rounds()), startup);
		}

		List<String> jvmOptions() {
			return this.startup.jvmOptions();
		}

	}

	/**
	 * One variant's result: CPU milliseconds and megabytes allocated by the
	 * thread calling {@code SpringApplication.run}, medians.
	 *
	 * @param jar the label of the app jar
	 * @param variant {@code starter}, {@code disabled} or {@code without}
	 * @param firstCpu CPU ms of the first start of a JVM (cold: class loading and interpreter included)
	 * @param firstMb MB allocated by the first start
	 * @param warmCpu CPU ms of a warm start
	 * @param warmCpuMin the least of a warm start
	 * @param warmCpuMax the most of a warm start
	 * @param warmMb MB allocated by a warm start
	 * @param starts the warm starts measured
	 * @param firstMbShare {@code firstMb} over the same jar's {@code without}, minus 1 (NaN for {@code without})
	 * @param warmCpuShare the same for {@code warmCpu}
	 * @param warmMbShare the same for {@code warmMb}
	 */
	public record Row(String jar, String variant, double firstCpu, double firstMb, double warmCpu, double warmCpuMin,
			double warmCpuMax, double warmMb, int starts, double firstMbShare, double warmCpuShare,
			double warmMbShare) {

		Row comparedTo(Row without) {
			return new Row(this.jar, this.variant, this.firstCpu, this.firstMb, this.warmCpu, this.warmCpuMin,
					this.warmCpuMax, this.warmMb, this.starts, this.firstMb / without.firstMb - 1,
					this.warmCpu / without.warmCpu - 1, this.warmMb / without.warmMb - 1);
		}

	}

	public static void main(String[] args) throws Exception {
		Settings settings = Settings.from(Options.parse(args));
		List<Row> rows = run(settings);
		System.out.println();
		System.out.print(table(rows, settings));
	}

	/**
	 * Runs every variant of every jar.
	 * @param settings what to run
	 * @return one row per jar and variant
	 */
	public static List<Row> run(Settings settings) throws IOException, InterruptedException {
		List<Path> unpacked = new ArrayList<>();
		try {
			return run(settings, unpacked);
		}
		finally {
			for (Path directory : unpacked) {
				delete(directory);
			}
		}
	}

	private static List<Row> run(Settings settings, List<Path> unpacked) throws IOException, InterruptedException {
		List<Variant> variants = new ArrayList<>();
		for (Map.Entry<String, String> jar : settings.startup().jars().entrySet()) {
			for (Map.Entry<String, Path> variant : StartupBenchmark
				.variantJars(settings.startup(), jar.getKey(), jar.getValue())
				.entrySet()) {
				Path directory = Files.createTempDirectory("benchmark-app-unpacked-");
				unpacked.add(directory);
				variants.add(new Variant(jar.getKey(), variant.getKey(), unpack(variant.getValue(), directory),
						mainClass(variant.getValue()), new ArrayList<>(), new ArrayList<>()));
			}
		}
		Path driver = driverClassDirectory();
		unpacked.add(driver);
		System.out.printf(Locale.ROOT, "%d starts per JVM (first %d not counted), %d JVM(s) per variant; JVM %s%n",
				settings.restarts(), settings.warmup(), settings.rounds(), settings.jvmOptions());
		for (int round = 0; round < settings.rounds(); round++) {
			for (Variant variant : variants) {
				List<double[]> starts = runJvm(variant, driver, settings);
				variant.first.add(starts.get(0));
				List<double[]> warm = starts.subList(settings.warmup(), starts.size());
				variant.warm.addAll(warm);
				System.out.printf(Locale.ROOT,
						"round %d %-12s %-8s first start %7.1f ms CPU %6.1f MB, warm median %6.1f ms CPU %6.1f MB%n",
						round + 1, variant.label, variant.name, starts.get(0)[0], starts.get(0)[2],
						median(warm, 0), median(warm, 2));
			}
		}
		List<Row> rows = new ArrayList<>();
		for (Variant variant : variants) {
			double[] warmCpu = variant.warm.stream().mapToDouble((start) -> start[0]).toArray();
			rows.add(new Row(variant.label, variant.name, median(variant.first, 0), median(variant.first, 2),
					median(variant.warm, 0), Arrays.stream(warmCpu).min().orElse(Double.NaN),
					Arrays.stream(warmCpu).max().orElse(Double.NaN), median(variant.warm, 2), warmCpu.length,
					Double.NaN, Double.NaN, Double.NaN));
		}
		List<Row> compared = new ArrayList<>();
		for (Row row : rows) {
			Row without = rows.stream()
				.filter((other) -> other.jar().equals(row.jar()) && other.variant().equals("without"))
				.findFirst()
				.orElse(null);
			compared.add((without == null || without == row) ? row : row.comparedTo(without));
		}
		return compared;
	}

	/** Each start's CPU ms, wall ms and allocated MB, in order, checked for the limiter being on or off as it should. */
	private static List<double[]> runJvm(Variant variant, Path driver, Settings settings)
			throws IOException, InterruptedException {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.addAll(settings.jvmOptions());
		command.add("-D" + RestartDriver.PATH_PROPERTY + "=" + settings.startup().path());
		command.add("-cp");
		command.add(driver + java.io.File.pathSeparator + variant.classPath);
		command.add(RestartDriver.class.getName());
		command.add(variant.mainClass);
		command.add(Integer.toString(settings.restarts()));
		command.add("--rate-limit.enabled=" + !variant.name.equals("disabled"));
		command.add("--server.address=127.0.0.1");
		Path log = Files.createTempFile("benchmark-restarts-", ".log");
		log.toFile().deleteOnExit();
		Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
		if (!process.waitFor(30, TimeUnit.MINUTES) || process.exitValue() != 0) {
			process.destroyForcibly();
			List<String> lines = Files.readAllLines(log);
			throw new IllegalStateException(variant.label + " " + variant.name + " failed:\n"
					+ String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size())));
		}
		List<double[]> starts = new ArrayList<>();
		for (String line : Files.readAllLines(log)) {
			if (line.startsWith("restart ")) {
				String[] fields = line.split(" ");
				StartupBenchmark.checkLimiter(variant.name.equals("starter") && settings.startup().expectHeader(),
						settings.startup().path(), fields[5].equals("-") ? null : fields[5]);
				starts.add(new double[] { Long.parseLong(fields[2]) / 1e6, Long.parseLong(fields[3]) / 1e6,
						Long.parseLong(fields[4]) / 1e6 });
			}
		}
		if (starts.size() != settings.restarts()) {
			throw new IllegalStateException(variant.label + " " + variant.name + ": " + starts.size() + " of "
					+ settings.restarts() + " starts reported");
		}
		return starts;
	}

	/** The jar's classes and libraries, unpacked into a temporary directory, as a class path in the index's order. */
	private static String unpack(Path appJar, Path directory) throws IOException {
		List<String> classPath = new ArrayList<>();
		classPath.add(directory.resolve("BOOT-INF/classes").toString());
		try (JarFile jar = new JarFile(appJar.toFile())) {
			for (ZipEntry entry : jar.stream().toList()) {
				if (entry.isDirectory() || !entry.getName().startsWith("BOOT-INF/")) {
					continue;
				}
				Path target = directory.resolve(entry.getName());
				Files.createDirectories(target.getParent());
				try (InputStream in = jar.getInputStream(entry)) {
					Files.copy(in, target);
				}
			}
			String index = new String(jar.getInputStream(jar.getEntry("BOOT-INF/classpath.idx")).readAllBytes(),
					StandardCharsets.UTF_8);
			for (String line : index.split("\n")) {
				String name = line.strip().replaceAll("^- \"|\"$", "");
				if (!name.isEmpty()) {
					classPath.add(directory.resolve(name).toString());
				}
			}
		}
		return String.join(java.io.File.pathSeparator, classPath);
	}

	private static void delete(Path directory) throws IOException {
		try (var paths = Files.walk(directory)) {
			for (Path path : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
				Files.deleteIfExists(path);
			}
		}
	}

	private static String mainClass(Path appJar) throws IOException {
		try (JarFile jar = new JarFile(appJar.toFile())) {
			return jar.getManifest().getMainAttributes().getValue("Start-Class");
		}
	}

	/** A directory holding the driver's class alone, so that none of the benchmark's own jars reach the app. */
	private static Path driverClassDirectory() {
		try {
			Path directory = Files.createTempDirectory("benchmark-restart-driver-");
			String file = RestartDriver.class.getName().replace('.', '/') + ".class";
			Path target = directory.resolve(file);
			Files.createDirectories(target.getParent());
			try (InputStream in = RestartDriver.class.getClassLoader().getResourceAsStream(file)) {
				Files.copy(in, target);
			}
			return directory;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * The rows as a Markdown table.
	 * @param rows what {@link #run(Settings)} returned
	 * @param settings the settings of the run
	 * @return the table, ending with a newline
	 */
	public static String table(List<Row> rows, Settings settings) {
		StringBuilder out = new StringBuilder();
		boolean severalJars = settings.startup().jars().size() > 1;
		out.append(severalJars ? "| App jar " : "")
			.append("| Variant | First start ms CPU | First start MB | MB vs without | Warm start ms CPU "
					+ "| Warm min–max | CPU vs without | Warm start MB | MB vs without |\n");
		out.append(severalJars ? "|---" : "").append("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
		for (Row r : rows) {
			out.append(severalJars ? "| " + r.jar() + " " : "")
				.append(String.format(Locale.ROOT, "| %s | %,.0f | %,.1f | %s | %,.1f | %,.1f–%,.1f | %s | %,.1f | %s |%n",
						r.variant(), r.firstCpu(), r.firstMb(), Figures.signedPercent(r.firstMbShare()), r.warmCpu(),
						r.warmCpuMin(), r.warmCpuMax(), Figures.signedPercent(r.warmCpuShare()), r.warmMb(),
						Figures.signedPercent(r.warmMbShare())));
		}
		out.append(String.format(Locale.ROOT,
				"%nCPU time and bytes allocated by the thread calling SpringApplication.run, until " + settings.startup().path()
						+ " answered; medians of %d first starts and %d warm starts per variant (%d JVMs × %d starts, the "
						+ "first %d of each not counted as warm); JVM %s.%n",
				settings.rounds(), rows.isEmpty() ? 0 : rows.get(0).starts(), settings.rounds(), settings.restarts(),
				settings.warmup(), String.join(" ", settings.jvmOptions())));
		return out.toString();
	}

	private static double median(List<double[]> starts, int field) {
		return Figures.median(starts.stream().map((start) -> start[field]).toList());
	}

	private record Variant(String label, String name, String classPath, String mainClass, List<double[]> first,
			List<double[]> warm) {
	}

}
