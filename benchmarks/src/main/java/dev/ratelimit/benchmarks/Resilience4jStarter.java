package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;

/**
 * {@link StartupBenchmark}'s {@code resilience4j} variant: the sample app
 * without our starter ({@link StarterJars#without}), with Resilience4j's
 * Spring Boot starter ({@code io.github.resilience4j:resilience4j-spring-boot3}
 * at the version the parent's {@code resilience4j-bom} manages, 2.4.0, the
 * newest that resolves here) and one rate limiter configured.
 * <p>
 * Resilience4j limits the methods annotated {@code @RateLimiter} (or code
 * that calls its registry), not routes: it has no servlet filter, and the
 * sample's controllers carry our annotations, not its. So this variant limits
 * nothing on {@code /api/hello}; what it measures is the start-up cost of the
 * starter itself: its auto-configurations, registries, aspects and metrics
 * binders, the CPU and the classes they load.
 * <p>
 * What a user adds, put into a copy of the jar by {@link StarterJars#plus} as
 * {@link StarterJars#with} adds ours:
 * <ul>
 * <li>the jars that this module's build copies into
 * {@code benchmarks/target/resilience4j-starter}: the starter and what its pom
 * needs at run time ({@code resilience4j-spring6} with its annotations,
 * consumer, framework-common, core and circularbuffer jars, and
 * {@code resilience4j-micrometer} with every module the starter configures:
 * ratelimiter, circuitbreaker, retry, bulkhead, timelimiter), and AspectJ's
 * weaver, which Resilience4j's documentation has users add
 * ({@code spring-boot-starter-aop}, {@code spring-boot-starter-aspectj} on
 * Boot 4): its annotations apply through aspects that it registers only when
 * AspectJ is on the class path. The copy without our starter lacks the weaver
 * (ours brings it) and {@code resilience4j-core} and {@code -bulkhead} (ours
 * uses them); Spring AOP, Micrometer and SLF4J the sample has;</li>
 * <li>one rate limiter instance, {@link #ARGUMENTS}, at the sample route
 * rule's rate: {@value #INSTANCE}, 10 permissions per 1 s period, refused at
 * once when spent ({@code timeout-duration=0}); Resilience4j's limiter is a
 * fixed window, so the route rule's burst of 20 has no equivalent;</li>
 * <li>its actuator endpoint, {@code /actuator/ratelimiters}, exposed beside
 * those the sample exposes, for {@link #checkRegistry(int)} to see the
 * limiter after the measured start.</li>
 * </ul>
 * Resilience4j 2.4.0's {@code resilience4j-spring-boot3} checks the Spring
 * Boot version as it starts (its {@code SpringBoot3VerifierAutoConfiguration})
 * and refuses any but 3.x, its failure analyzer's action pointing to a
 * {@code resilience4j-spring-boot4} module that the 2.4.0 BOM, the newest
 * here, does not list. The benchmark then reports the variant as not run,
 * with the cause the app logged, {@link #cause(String)}.
 */
final class Resilience4jStarter {

	/** The directory of {@code benchmarks/target} that the build fills with the jars. */
	static final String DIRECTORY = "resilience4j-starter";

	/** The rate limiter instance configured, named after the sample's route rule's limit. */
	static final String INSTANCE = "per-ip";

	/** Resilience4j's actuator endpoint listing the rate limiters of its registry. */
	static final String ENDPOINT = "/actuator/ratelimiters";

	/** The rate limiter, and its endpoint exposed, as command-line properties. */
	static final List<String> ARGUMENTS = List.of(
			"--resilience4j.ratelimiter.instances." + INSTANCE + ".limit-for-period=10",
			"--resilience4j.ratelimiter.instances." + INSTANCE + ".limit-refresh-period=1s",
			"--resilience4j.ratelimiter.instances." + INSTANCE + ".timeout-duration=0",
			// The sample's own list (application.yml) and Resilience4j's: the other endpoints start as without it.
			"--management.endpoints.web.exposure.include=health,metrics,prometheus,ratelimits,ratelimiters");

	private Resilience4jStarter() {
	}

	/**
	 * A copy of the sample app's jar without our starter, with Resilience4j's.
	 * @param without the sample app's jar without our starter ({@link StarterJars#without})
	 * @return the copy, a temporary file deleted when this JVM exits
	 */
	static Path jar(Path without) {
		return StarterJars.plus(without, libraries(), DIRECTORY);
	}

	/**
	 * Checks, after the start was measured, that Resilience4j's rate limiter
	 * registry holds the configured instance: its actuator endpoint answers 200
	 * and names {@value #INSTANCE}.
	 * @param port the app's port
	 * @throws IllegalStateException if it does not
	 */
	static void checkRegistry(int port) {
		HttpConnection.Response response;
		try (HttpConnection connection = new HttpConnection("127.0.0.1", port, ENDPOINT, 2_000)) {
			response = connection.getFully();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot ask " + ENDPOINT, ex);
		}
		if (response.status() != 200 || !response.body().contains("\"" + INSTANCE + "\"")) {
			throw new IllegalStateException("With Resilience4j's starter, " + ENDPOINT + " answered "
					+ response.status() + " " + response.body() + ": its registry has no rate limiter " + INSTANCE);
		}
	}

	/**
	 * Why the app did not start, from its log: what {@link Bucket4jStarter#cause(String)} reads (a failure
	 * analysis or the exception), with the failure analysis's action if it gave one: Resilience4j's names the
	 * module to use instead.
	 * @param log what the app logged
	 * @return one line, or {@code null} if the log shows no failure
	 */
	static String cause(String log) {
		String cause = Bucket4jStarter.cause(log);
		if (cause == null) {
			return null;
		}
		List<String> lines = log.lines().toList();
		int action = lines.indexOf("Action:");
		if (action < 0) {
			return cause;
		}
		StringBuilder text = new StringBuilder();
		for (String line : lines.subList(action + 1, lines.size())) {
			if (line.isBlank() && text.length() > 0) {
				break;
			}
			if (!line.isBlank()) {
				text.append((text.length() > 0) ? " " : "").append(line.trim());
			}
		}
		return (text.length() > 0) ? cause + "; action: " + text : cause;
	}

	/** The starter's version, from its jar's name: what the build copied, whatever this class's javadoc says. */
	static String version() {
		String prefix = "resilience4j-spring-boot3-";
		for (Path jar : libraries()) {
			String name = jar.getFileName().toString();
			if (name.startsWith(prefix)) {
				return name.substring(prefix.length(), name.length() - ".jar".length());
			}
		}
		return "?";
	}

	/** The jars the build copied into {@code benchmarks/target/resilience4j-starter} ({@link StarterJars#copied}). */
	static List<Path> libraries() {
		return StarterJars.copied(DIRECTORY, "Resilience4j starter");
	}

}
