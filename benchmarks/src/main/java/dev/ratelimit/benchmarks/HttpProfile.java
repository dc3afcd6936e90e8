package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * Reads the JFR recordings {@code HttpBenchmark --jfr dir} leaves and says
 * where the request threads' time went: execution samples of Tomcat's request
 * threads ({@code *-exec-*}) in the last {@code --seconds} of each recording
 * (the measured rounds, not the warm-up), by the package of the frame on top
 * (self time), and inclusive of the limiter's own work (the methods the route
 * filter calls, with their callees, but not the rest of the filter chain it
 * passes the request to).
 * Shares are of the request threads' samples; multiplied by the benchmark's
 * CPU time per request they give microseconds per request.
 * <p>
 * Run: {@code java -cp benchmarks/target/benchmarks.jar dev.ratelimit.benchmarks.HttpProfile
 * [--seconds 60] dir/memory-limiter.jfr dir/memory-no-limiter.jfr}
 */
public final class HttpProfile {

	private static final List<String[]> GROUPS = List.of(new String[] { "dev.ratelimit.", "limiter (dev.ratelimit)" },
			new String[] { "io.micrometer.", "Micrometer" }, new String[] { "com.fasterxml.", "Jackson" },
			new String[] { "tools.jackson.", "Jackson" }, new String[] { "org.apache.", "Tomcat" },
			new String[] { "org.springframework.", "Spring" }, new String[] { "java.", "JDK" },
			new String[] { "jdk.", "JDK" }, new String[] { "sun.", "JDK" });

	private HttpProfile() {
	}

	public static void main(String[] args) throws IOException {
		int seconds = 60;
		List<Path> files = new ArrayList<>();
		for (int i = 0; i < args.length; i++) {
			if (args[i].equals("--seconds")) {
				seconds = Integer.parseInt(args[++i]);
			}
			else {
				files.add(Path.of(args[i]));
			}
		}
		for (Path file : files) {
			System.out.print(profile(file, seconds));
		}
	}

	static String profile(Path file, int seconds) throws IOException {
		List<RecordedEvent> samples = new ArrayList<>();
		Instant last = Instant.MIN;
		for (RecordedEvent event : RecordingFile.readAllEvents(file)) {
			if (event.getEventType().getName().equals("jdk.ExecutionSample")) {
				samples.add(event);
				last = event.getStartTime().isAfter(last) ? event.getStartTime() : last;
			}
		}
		Instant from = last.minusSeconds(seconds);
		Map<String, Integer> self = new LinkedHashMap<>();
		Map<String, Integer> ours = new LinkedHashMap<>();
		int total = 0;
		int inLimiter = 0;
		for (RecordedEvent event : samples) {
			RecordedThread thread = event.getThread("sampledThread");
			if (event.getStartTime().isBefore(from) || thread == null || thread.getJavaName() == null
					|| !thread.getJavaName().contains("-exec-") || event.getStackTrace() == null) {
				continue;
			}
			List<RecordedFrame> frames = event.getStackTrace().getFrames();
			if (frames.isEmpty()) {
				continue;
			}
			total++;
			self.merge(group(name(frames.get(0))), 1, Integer::sum);
			String step = limiterStep(frames);
			if (step != null) {
				inLimiter++;
				ours.merge(step, 1, Integer::sum);
			}
		}
		int all = Math.max(1, total);
		StringBuilder out = new StringBuilder();
		out.append(String.format(Locale.ROOT, "%s: %,d samples of request threads in the last %d s%n", file, total,
				seconds));
		self.entrySet()
			.stream()
			.sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
			.forEach((e) -> out.append(String.format(Locale.ROOT, "  self %-26s %6d  %5.1f%%%n", e.getKey(),
					e.getValue(), 100.0 * e.getValue() / all)));
		out.append(String.format(Locale.ROOT, "  inclusive: in the limiter %6d  %5.1f%%, by the limiter "
				+ "step (what the filter called, with its callees; not the rest of the chain):%n", inLimiter, 100.0 * inLimiter / all));
		ours.entrySet()
			.stream()
			.sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
			.limit(25)
			.forEach((e) -> out.append(String.format(Locale.ROOT, "    %-70s %6d  %5.1f%%%n", e.getKey(), e.getValue(),
					100.0 * e.getValue() / all)));
		return out.toString();
	}

	/**
	 * Which step of the limiter a sample is in (seen through the filter's
	 * {@code doFilter}): the limiter method the filter's
	 * {@code doFilterInternal} called (with everything it calls), or
	 * {@code doFilterInternal} itself for what it does inline; {@code null} when
	 * no limiter method is on the stack, or when the filter is only passing the
	 * request down the chain (the rest of the application's time).
	 */
	private static String limiterStep(List<RecordedFrame> frames) {
		int outermost = -1;
		for (int i = frames.size() - 1; i >= 0; i--) {
			if (isLimiter(name(frames.get(i)))) {
				outermost = i;
				break;
			}
		}
		if (outermost < 0) {
			return null;
		}
		String name = name(frames.get(outermost));
		// The filter's entry (doFilter, and filterWithOwnMarker for a second instance) passes the
		// request on or calls doFilterInternal, where the steps are: look through it.
		while (outermost > 0 && (name.endsWith("RateLimitFilter.doFilter")
				|| name.endsWith("RateLimitFilter.filterWithOwnMarker"))) {
			outermost--;
			name = name(frames.get(outermost));
			if (name.startsWith("org.apache.catalina.") || name.startsWith("jakarta.servlet.")) {
				return null;
			}
		}
		if (!name.endsWith("RateLimitFilter.doFilterInternal") || outermost == 0) {
			return name;
		}
		String callee = name(frames.get(outermost - 1));
		if (callee.startsWith("org.apache.catalina.") || callee.startsWith("jakarta.servlet.")) {
			return null;
		}
		return isLimiter(callee) ? callee : name + " (inline)";
	}

	private static boolean isLimiter(String name) {
		// The sample app's own classes share the package prefix: they are the application.
		return name.startsWith("dev.ratelimit.") && !name.startsWith("dev.ratelimit.sample.");
	}

	private static String name(RecordedFrame frame) {
		return frame.getMethod().getType().getName() + "." + frame.getMethod().getName();
	}

	private static String group(String name) {
		for (String[] group : GROUPS) {
			if (name.startsWith(group[0])) {
				return group[1];
			}
		}
		return "other";
	}

}
