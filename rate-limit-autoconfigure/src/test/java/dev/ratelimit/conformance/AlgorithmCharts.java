package dev.ratelimit.conformance;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.memory.InMemoryRateLimitBackend;
import dev.ratelimit.support.ManualTimeSource;

/**
 * Draws, for each algorithm, the burst pattern of {@link AlgorithmBehaviourTests}
 * (limit 10 per second; 10 calls at 0.5 s, 10 at 0.99 s, 10 at 1.01 s, then 20
 * per second from 1.5 s to 3.5 s) as an SVG chart: one mark per request, green
 * circles for admitted requests at the time they start (arrival plus any shaping
 * delay), red crosses for rejected requests at their arrival, stacked per 10 ms,
 * and below them the number admitted in the last second against the limit.
 * <p>
 * The charts in {@code docs/images} are exactly what this class generates;
 * {@link AlgorithmChartsTests} fails when they drift. Regenerate them from the
 * repository root with:
 *
 * <pre>
 * mvn -q -pl rate-limit-autoconfigure test-compile dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 * cd rate-limit-autoconfigure
 * java -cp target/test-classes:target/classes:$(cat target/cp.txt) dev.ratelimit.conformance.AlgorithmCharts ../docs/images
 * </pre>
 */
public final class AlgorithmCharts {

	/** How to regenerate the charts, from the repository root. */
	public static final String REGENERATE = "mvn -q -pl rate-limit-autoconfigure test-compile dependency:build-classpath"
			+ " -Dmdep.outputFile=target/cp.txt && cd rate-limit-autoconfigure && java -cp"
			+ " target/test-classes:target/classes:$(cat target/cp.txt) dev.ratelimit.conformance.AlgorithmCharts"
			+ " ../docs/images";

	/** Where the charts live, relative to the module directory (Maven's working directory). */
	public static final String DEFAULT_DIRECTORY = "../docs/images";

	private static final long MILLI = 1_000L;

	private static final long SECOND = 1_000_000L;

	private static final int LIMIT = 10;

	// Layout, in pixels.
	private static final int WIDTH = 720;

	private static final int HEIGHT = 392;

	private static final double TEXT_LEFT = 16;

	private static final double PLOT_LEFT = 64;

	private static final double PLOT_RIGHT = 700;

	/** The time axis ends at 4.5 s, after the shaping bucket's last start (4.3 s). */
	static final long AXIS_END_MILLIS = 4_500;

	private static final double MARK_BASELINE = 168;

	private static final double MARK_PITCH = 6;

	private static final double MARK_TOP = 102;

	private static final double COUNT_TOP = 252;

	private static final double COUNT_BOTTOM = 352;

	private static final int COUNT_MAX = 20;

	private static final String GREEN = "#2e7d32";

	private static final String RED = "#c62828";

	private static final String BLUE = "#1565c0";

	private static final String GREY = "#666666";

	private AlgorithmCharts() {
	}

	/**
	 * Writes every algorithm's chart to {@code algorithm-<name>.svg}.
	 * @param args the directory to write to; defaults to {@value #DEFAULT_DIRECTORY}
	 * @throws IOException if a file cannot be written
	 */
	public static void main(String[] args) throws IOException {
		Path directory = Path.of((args.length > 0) ? args[0] : DEFAULT_DIRECTORY);
		Files.createDirectories(directory);
		for (Algorithm algorithm : Algorithm.values()) {
			Path file = directory.resolve(fileName(algorithm));
			Files.writeString(file, svg(algorithm), StandardCharsets.UTF_8);
			System.out.println("Wrote " + file.toAbsolutePath().normalize());
		}
	}

	/**
	 * The algorithm's name as it is configured, e.g. {@code token-bucket}.
	 * @param algorithm the algorithm
	 * @return the kebab-case name
	 */
	public static String name(Algorithm algorithm) {
		return algorithm.name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

	/**
	 * The chart's file name, e.g. {@code algorithm-token-bucket.svg}.
	 * @param algorithm the algorithm
	 * @return the file name
	 */
	public static String fileName(Algorithm algorithm) {
		return "algorithm-" + name(algorithm) + ".svg";
	}

	/**
	 * Runs the burst pattern through the in-memory backend on a manual clock.
	 * @param algorithm the algorithm, limited to 10 per second
	 * @return every request's arrival, decision and start time
	 */
	public static List<Request> run(Algorithm algorithm) {
		RateLimitPolicy policy = AlgorithmBehaviourTests.tenPerSecond(algorithm);
		ManualTimeSource clock = new ManualTimeSource(ConformanceTests.START_MICROS);
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(clock, 10);
		List<Request> requests = new ArrayList<>();
		long now = 0;
		for (long arrivalMillis : AlgorithmBehaviourTests.burstPattern()) {
			clock.advanceMicros(arrivalMillis * MILLI - now);
			now = arrivalMillis * MILLI;
			Decision decision = backend.tryConsume(policy, "k", 1);
			requests.add(new Request(now, decision.allowed(), decision.allowed() ? now + decision.delayMicros() : now));
		}
		return requests;
	}

	/**
	 * The chart of one algorithm, a complete SVG document.
	 * @param algorithm the algorithm
	 * @return the SVG text
	 */
	public static String svg(Algorithm algorithm) {
		List<Request> requests = run(algorithm);
		int admitted = (int) requests.stream().filter(Request::admitted).count();
		int rejected = requests.size() - admitted;
		StringBuilder svg = new StringBuilder(8192);
		svg.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
		svg.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(WIDTH).append("\" height=\"")
			.append(HEIGHT).append("\" viewBox=\"0 0 ").append(WIDTH).append(' ').append(HEIGHT)
			.append("\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">\n");
		svg.append("<title>").append(name(algorithm)).append(", 10 per second: ").append(admitted)
			.append(" of ").append(requests.size()).append(" requests admitted</title>\n");
		svg.append("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
		header(svg, algorithm, admitted, rejected);
		grid(svg);
		marks(svg, requests);
		counts(svg, requests);
		svg.append("</svg>\n");
		return svg.toString();
	}

	private static void header(StringBuilder svg, Algorithm algorithm, int admitted, int rejected) {
		svg.append("<text x=\"").append(fmt(TEXT_LEFT)).append("\" y=\"22\" font-size=\"15\" font-weight=\"bold\">")
			.append(name(algorithm)).append(", 10 per second</text>\n");
		String terms = algorithm.isRateBased() ? "capacity: 10, refill: 10/1s" : "capacity: 10, window: 1s";
		String marks = (algorithm == Algorithm.LEAKY_BUCKET_SHAPING)
				? "One mark per call, stacked per 10 ms: admitted above the line at its start (arrival + wait), rejected below at its arrival."
				: "One mark per call at its arrival, stacked per 10 ms: admitted above the line, rejected below.";
		svg.append("<g fill=\"").append(GREY).append("\">\n");
		svg.append("<text x=\"").append(fmt(TEXT_LEFT)).append("\" y=\"40\">").append(terms)
			.append(". Traffic: 10 calls at 0.5 s, 10 at 0.99 s, 10 at 1.01 s, then 20/s from 1.5 s to 3.5 s.</text>\n");
		svg.append("<text x=\"").append(fmt(TEXT_LEFT)).append("\" y=\"55\">").append(marks).append("</text>\n");
		svg.append("</g>\n");
		// Legend.
		double y = 78;
		double x = TEXT_LEFT;
		svg.append("<g>\n");
		svg.append("<circle cx=\"").append(fmt(x + 4)).append("\" cy=\"").append(fmt(y - 4))
			.append("\" r=\"2.8\" fill=\"").append(GREEN).append("\"/>");
		svg.append("<text x=\"").append(fmt(x + 12)).append("\" y=\"").append(fmt(y)).append("\">admitted (")
			.append(admitted).append(")</text>\n");
		x += 100;
		svg.append("<path d=\"").append(cross(x + 4, y - 4)).append("\" stroke=\"").append(RED)
			.append("\" stroke-width=\"1.6\"/>");
		svg.append("<text x=\"").append(fmt(x + 12)).append("\" y=\"").append(fmt(y)).append("\">rejected (")
			.append(rejected).append(")</text>\n");
		x += 100;
		svg.append("<path d=\"M").append(fmt(x)).append(' ').append(fmt(y - 4)).append("h16\" stroke=\"")
			.append(BLUE).append("\" stroke-width=\"2\"/>");
		svg.append("<text x=\"").append(fmt(x + 22)).append("\" y=\"").append(fmt(y))
			.append("\">admitted in the last 1 s</text>\n");
		x += 160;
		svg.append("<path d=\"M").append(fmt(x)).append(' ').append(fmt(y - 4)).append("h16\" stroke=\"")
			.append(GREY).append("\" stroke-width=\"1.2\" stroke-dasharray=\"4 3\"/>");
		svg.append("<text x=\"").append(fmt(x + 22)).append("\" y=\"").append(fmt(y)).append("\">limit ")
			.append(LIMIT).append("</text>\n");
		svg.append("</g>\n");
	}

	private static void grid(StringBuilder svg) {
		svg.append("<g stroke=\"#e0e0e0\" stroke-width=\"1\">\n");
		for (long t = 0; t <= AXIS_END_MILLIS; t += 500) {
			svg.append("<path d=\"M").append(fmt(x(t * MILLI))).append(' ').append(fmt(MARK_TOP)).append("V")
				.append(fmt(COUNT_BOTTOM)).append("\"/>");
		}
		svg.append("\n</g>\n");
		// Mark panel: the line admitted marks stand on and rejected marks hang from.
		svg.append("<path d=\"M").append(fmt(PLOT_LEFT)).append(' ').append(fmt(MARK_BASELINE)).append("H")
			.append(fmt(PLOT_RIGHT)).append("\" stroke=\"#9e9e9e\" stroke-width=\"1\"/>\n");
		svg.append("<text x=\"").append(fmt(PLOT_LEFT - 6)).append("\" y=\"").append(fmt(MARK_BASELINE - 24))
			.append("\" text-anchor=\"end\" fill=\"").append(GREEN).append("\">admitted</text>\n");
		svg.append("<text x=\"").append(fmt(PLOT_LEFT - 6)).append("\" y=\"").append(fmt(MARK_BASELINE + 32))
			.append("\" text-anchor=\"end\" fill=\"").append(RED).append("\">rejected</text>\n");
		// Count panel: y axis 0..20 and the time axis.
		svg.append("<g fill=\"").append(GREY).append("\" text-anchor=\"end\">\n");
		for (int c = 0; c <= COUNT_MAX; c += 5) {
			svg.append("<text x=\"").append(fmt(PLOT_LEFT - 6)).append("\" y=\"").append(fmt(countY(c) + 4))
				.append("\">").append(c).append("</text>");
		}
		svg.append("\n</g>\n");
		svg.append("<path d=\"M").append(fmt(PLOT_LEFT)).append(' ').append(fmt(COUNT_TOP)).append("V")
			.append(fmt(COUNT_BOTTOM)).append("H").append(fmt(PLOT_RIGHT)).append("\" fill=\"none\" stroke=\"")
			.append(GREY).append("\" stroke-width=\"1\"/>\n");
		svg.append("<g fill=\"").append(GREY).append("\" text-anchor=\"middle\">\n");
		for (long t = 0; t <= AXIS_END_MILLIS; t += 500) {
			svg.append("<path d=\"M").append(fmt(x(t * MILLI))).append(' ').append(fmt(COUNT_BOTTOM)).append("v4\" stroke=\"")
				.append(GREY).append("\"/><text x=\"").append(fmt(x(t * MILLI))).append("\" y=\"")
				.append(fmt(COUNT_BOTTOM + 16)).append("\">").append(seconds(t)).append("</text>\n");
		}
		svg.append("</g>\n");
		svg.append("<text x=\"").append(fmt(PLOT_RIGHT)).append("\" y=\"").append(fmt(COUNT_BOTTOM + 32))
			.append("\" text-anchor=\"end\" fill=\"").append(GREY).append("\">time (s)</text>\n");
	}

	private static void marks(StringBuilder svg, List<Request> requests) {
		// Requests in the same 10 ms bucket stack: admitted upwards, rejected downwards.
		Map<Long, Integer> admittedStack = new HashMap<>();
		Map<Long, Integer> rejectedStack = new HashMap<>();
		StringBuilder green = new StringBuilder();
		StringBuilder red = new StringBuilder();
		for (Request request : requests) {
			if (request.admitted()) {
				int level = admittedStack.merge(request.startMicros() / (10 * MILLI), 1, Integer::sum) - 1;
				green.append("<circle class=\"admitted\" cx=\"").append(fmt(x(request.startMicros())))
					.append("\" cy=\"").append(fmt(MARK_BASELINE - MARK_PITCH / 2 - 1 - level * MARK_PITCH))
					.append("\" r=\"2.8\"/>\n");
			}
			else {
				int level = rejectedStack.merge(request.arrivalMicros() / (10 * MILLI), 1, Integer::sum) - 1;
				red.append("<path class=\"rejected\" d=\"")
					.append(cross(x(request.arrivalMicros()), MARK_BASELINE + MARK_PITCH / 2 + 1 + level * MARK_PITCH))
					.append("\"/>\n");
			}
		}
		svg.append("<g fill=\"").append(GREEN).append("\">\n").append(green).append("</g>\n");
		svg.append("<g stroke=\"").append(RED).append("\" stroke-width=\"1.6\">\n").append(red).append("</g>\n");
	}

	private static void counts(StringBuilder svg, List<Request> requests) {
		// Admitted in the last second at time t: start times in (t - 1 s, t].
		// Each start s counts from s (inclusive) until s + 1 s (exclusive).
		Map<Long, Integer> changes = new TreeMap<>();
		for (Request request : requests) {
			if (request.admitted()) {
				changes.merge(request.startMicros(), 1, Integer::sum);
				changes.merge(request.startMicros() + SECOND, -1, Integer::sum);
			}
		}
		long end = AXIS_END_MILLIS * MILLI;
		StringBuilder path = new StringBuilder("M").append(fmt(x(0))).append(' ').append(fmt(countY(0)));
		int count = 0;
		for (Map.Entry<Long, Integer> change : changes.entrySet()) {
			if (change.getKey() > end || change.getValue() == 0) {
				continue;
			}
			count += change.getValue();
			path.append("H").append(fmt(x(change.getKey()))).append("V").append(fmt(countY(count)));
		}
		path.append("H").append(fmt(x(end)));
		svg.append("<path d=\"").append(path).append("V").append(fmt(countY(0))).append("Z\" fill=\"").append(BLUE)
			.append("\" fill-opacity=\"0.12\" stroke=\"none\"/>\n");
		svg.append("<path d=\"").append(path).append("\" fill=\"none\" stroke=\"").append(BLUE)
			.append("\" stroke-width=\"1.8\"/>\n");
		svg.append("<path d=\"M").append(fmt(PLOT_LEFT)).append(' ').append(fmt(countY(LIMIT))).append("H")
			.append(fmt(PLOT_RIGHT)).append("\" stroke=\"").append(GREY)
			.append("\" stroke-width=\"1.2\" stroke-dasharray=\"4 3\"/>\n");
	}

	private static String cross(double cx, double cy) {
		return "M" + fmt(cx - 2.5) + ' ' + fmt(cy - 2.5) + "l5 5m0 -5l-5 5";
	}

	private static double x(long micros) {
		return PLOT_LEFT + (PLOT_RIGHT - PLOT_LEFT) * micros / (AXIS_END_MILLIS * MILLI);
	}

	private static double countY(int count) {
		return COUNT_BOTTOM - (COUNT_BOTTOM - COUNT_TOP) * count / COUNT_MAX;
	}

	private static String seconds(long millis) {
		return (millis % 1000 == 0) ? Long.toString(millis / 1000) : String.format(Locale.ROOT, "%.1f", millis / 1000.0);
	}

	private static String fmt(double value) {
		String text = String.format(Locale.ROOT, "%.1f", value);
		return text.endsWith(".0") ? text.substring(0, text.length() - 2) : text;
	}

	/**
	 * One request of the run, times in microseconds since the start of the pattern.
	 * @param arrivalMicros when the request arrived
	 * @param admitted whether it was admitted
	 * @param startMicros when it started: its arrival plus its shaping delay, or its
	 * arrival if it was rejected
	 */
	public record Request(long arrivalMicros, boolean admitted, long startMicros) {
	}

}
