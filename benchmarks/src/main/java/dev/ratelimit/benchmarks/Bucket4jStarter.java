package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

/**
 * {@link StartupBenchmark}'s {@code bucket4j} variant: the sample app without
 * our starter ({@link StarterJars#without}), with Bucket4j's Spring Boot
 * starter ({@code com.giffing.bucket4j.spring.boot.starter:bucket4j-spring-boot-starter}
 * 0.12.10, the newest that resolves here) limiting the sample's route instead.
 * <p>
 * What a user adds, put into a copy of the jar by {@link StarterJars#plus} as
 * {@link StarterJars#with} adds ours:
 * <ul>
 * <li>the jars that this module's build copies into
 * {@code benchmarks/target/bucket4j-starter}: the starter and what it needs
 * at run time, Hibernate Validator (its properties are {@code @Validated}, and
 * Spring Boot refuses to start with the validation API but no provider), and
 * Caffeine behind JCache, the in-memory cache of its caffeine example;</li>
 * <li>the app's cache for it, {@link dev.ratelimit.benchmarks.bucket4j.Bucket4jCache}
 * (why a bean of the app: its javadoc), named in {@code spring.main.sources};</li>
 * <li>the limit, {@link #ARGUMENTS}: the sample's route rule
 * ({@code /api/** -> per-ip}: a token bucket of 20 per client IP, refilled 10
 * per second, 429 when empty) in Bucket4j's terms on the command line, one
 * servlet filter on the URIs matching {@code /api/.*}, keyed by
 * {@code getRemoteAddr()}, one bandwidth of capacity 20 refilled greedily
 * (continuously, as our token bucket) by 10 tokens per second.</li>
 * </ul>
 * On Spring Boot 4 this starter does not start: its servlet filter's
 * configuration class names Spring Boot 3's
 * {@code org.springframework.boot.web.servlet.server.ConfigurableServletWebServerFactory},
 * which Boot 4 moved, and Spring fails to load it. {@link #cause(String)}
 * finds that in the app's log, for the benchmark to report.
 */
final class Bucket4jStarter {

	/** The directory of {@code benchmarks/target} that the build fills with the jars. */
	static final String DIRECTORY = "bucket4j-starter";

	/** The app's cache configuration, compiled in this module and packed into a jar of its own for the copy. */
	private static final String CACHE_CONFIGURATION = "dev.ratelimit.benchmarks.bucket4j.Bucket4jCache";

	/** The sample's route limit for Bucket4j's starter, and the app's cache for it, as command-line properties. */
	static final List<String> ARGUMENTS = List.of(
			"--spring.main.sources=" + CACHE_CONFIGURATION,
			"--bucket4j.enabled=true",
			"--bucket4j.filters[0].cache-name=" + dev.ratelimit.benchmarks.bucket4j.Bucket4jCache.CACHE,
			// A regular expression matched against the request URI: what /api/** is to our route rule.
			"--bucket4j.filters[0].url=/api/.*",
			"--bucket4j.filters[0].rate-limits[0].cache-key=getRemoteAddr()",
			"--bucket4j.filters[0].rate-limits[0].bandwidths[0].capacity=20",
			"--bucket4j.filters[0].rate-limits[0].bandwidths[0].refill-capacity=10",
			"--bucket4j.filters[0].rate-limits[0].bandwidths[0].time=1",
			"--bucket4j.filters[0].rate-limits[0].bandwidths[0].unit=seconds",
			"--bucket4j.filters[0].rate-limits[0].bandwidths[0].refill-speed=greedy");

	/**
	 * Requests sent at most, one after the other, to see a 429: at 10 refilled
	 * per second, 21 requests within the first second are refused one at the
	 * latest, and 200 within 18 seconds.
	 */
	private static final int QUICK_REQUESTS = 200;

	private Bucket4jStarter() {
	}

	/**
	 * A copy of the sample app's jar without our starter, with Bucket4j's.
	 * @param without the sample app's jar without our starter ({@link StarterJars#without})
	 * @return the copy, a temporary file deleted when this JVM exits
	 */
	static Path jar(Path without) {
		List<Path> jars = new ArrayList<>(libraries());
		jars.add(cacheConfigurationJar());
		return StarterJars.plus(without, jars, "bucket4j-starter");
	}

	/**
	 * Checks, after the start was measured, that Bucket4j limits the route: its
	 * first answer carries {@code X-Rate-Limit-Remaining}, and quick requests
	 * from the same address meet a 429.
	 * @param port the app's port
	 * @param path the path polled until it answered, under {@code /api/}
	 * @param first that first answer
	 * @throws IllegalStateException if it does not limit
	 */
	static void checkLimits(int port, String path, HttpConnection.Response first) {
		if (first.header("X-Rate-Limit-Remaining") == null) {
			throw new IllegalStateException("With Bucket4j's starter, " + path
					+ " answered without an X-Rate-Limit-Remaining header: its filter did not run");
		}
		try (HttpConnection connection = new HttpConnection("127.0.0.1", port, path, 2_000)) {
			for (int i = 0; i < QUICK_REQUESTS; i++) {
				if (connection.get() == 429) {
					return;
				}
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot ask " + path + " again", ex);
		}
		throw new IllegalStateException("With Bucket4j's starter, " + QUICK_REQUESTS + " quick requests to " + path
				+ " were all admitted: its limit of 20, refilled 10 per second, did not apply");
	}

	/**
	 * Why the app did not start, from its log: Spring Boot's failure analysis
	 * if it gave one, else the exception that stopped it (up to the end of its
	 * message's first sentence) and that exception's root cause.
	 * @param log what the app logged
	 * @return one line, or {@code null} if the log shows no failure
	 */
	static String cause(String log) {
		List<String> lines = log.lines().toList();
		int description = lines.indexOf("Description:");
		if (description >= 0) {
			StringBuilder text = new StringBuilder();
			for (String line : lines.subList(description + 1, lines.size())) {
				if (line.equals("Action:")) {
					break;
				}
				if (!line.isBlank()) {
					text.append((text.length() > 0) ? " " : "").append(line.trim());
				}
			}
			return text.toString();
		}
		String thrown = null;
		String root = null;
		for (int i = 0; i + 1 < lines.size(); i++) {
			String line = lines.get(i);
			boolean traced = lines.get(i + 1).startsWith("\tat ");
			if (thrown == null && traced && !line.isBlank() && !Character.isWhitespace(line.charAt(0))) {
				thrown = firstSentence(line);
			}
			if (line.startsWith("Caused by: ")) {
				root = line.substring("Caused by: ".length());
			}
		}
		if (thrown == null) {
			return null;
		}
		return (root == null) ? thrown : thrown + "; root cause: " + root;
	}

	private static String firstSentence(String text) {
		int end = text.indexOf(". ");
		return (end > 0) ? text.substring(0, end) : text;
	}

	/** The starter's version, from its jar's name: what the build copied, whatever this class's javadoc says. */
	static String version() {
		String prefix = "bucket4j-spring-boot-starter-";
		for (Path jar : libraries()) {
			String name = jar.getFileName().toString();
			// Not bucket4j-spring-boot-starter-context-*.jar: the starter's own jar has the version right after.
			if (name.startsWith(prefix) && Character.isDigit(name.charAt(prefix.length()))) {
				return name.substring(prefix.length(), name.length() - ".jar".length());
			}
		}
		return "?";
	}

	/** The jars the build copied into {@code benchmarks/target/bucket4j-starter} ({@link StarterJars#copied}). */
	static List<Path> libraries() {
		return StarterJars.copied(DIRECTORY, "Bucket4j starter");
	}

	/**
	 * A jar holding the app's cache configuration class, read from this benchmark's own class path (not loaded:
	 * its JCache types are not on it), in a temporary file deleted when this JVM exits.
	 */
	private static Path cacheConfigurationJar() {
		String entry = CACHE_CONFIGURATION.replace('.', '/') + ".class";
		try (InputStream in = Bucket4jStarter.class.getClassLoader().getResourceAsStream(entry)) {
			if (in == null) {
				throw new IllegalStateException("No " + entry + " on the class path");
			}
			Path jar = Files.createTempFile("bucket4j-sample-cache-", ".jar");
			jar.toFile().deleteOnExit();
			try (ZipOutputStream out = new ZipOutputStream(Files.newOutputStream(jar))) {
				out.putNextEntry(new ZipEntry(entry));
				in.transferTo(out);
				out.closeEntry();
			}
			return jar;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot write a jar of " + entry, ex);
		}
	}

}
