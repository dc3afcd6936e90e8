package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A short run of the sample app under load with one noisy neighbour, seen
 * through the dashboard's own queries: eight users each run an agent every two
 * seconds, within their plan (5 at once, then 1 per second); from
 * {@code --noisy-from} to {@code --noisy-until} a ninth runs one every 100 ms.
 * {@code /actuator/prometheus} is scraped every second, the panels of
 * {@code docs/monitoring/grafana-dashboard.json} that {@link PromQuery} can
 * evaluate are evaluated over the scrapes (with {@code $policy} the policy
 * shown), and the run ends with what {@code GET
 * /actuator/ratelimits/agent-runs/top} answers. Writes a chart and a page.
 * <p>
 * {@code java -cp benchmarks/target/benchmarks.jar dev.ratelimit.benchmarks.NoisyNeighbourRun}
 * (after {@code mvn -q -pl benchmarks -am package -DskipTests}); about 80 s.
 */
public final class NoisyNeighbourRun {

	private static final String POLICY = "agent-runs";

	private static final List<String> PANELS = List.of("Decisions by outcome", "Refusal ratio", "Near limit");

	private NoisyNeighbourRun() {
	}

	public static void main(String[] args) throws Exception {
		Options options = Options.parse(args);
		int seconds = options.integer("seconds", 60);
		int noisyFrom = options.integer("noisy-from", 20);
		int noisyUntil = options.integer("noisy-until", 45);
		int rateWindow = options.integer("rate-window", 10);
		Path dashboard = Path.of(options.string("dashboard", "docs/monitoring/grafana-dashboard.json"));
		Path chart = Path.of(options.string("chart", "docs/images/noisy-neighbour.svg"));
		Path page = Path.of(options.string("out", "docs/noisy-neighbour-run.md"));
		Path jar = SampleAppProcess.locateJar(options.string("jar", ""));
		JsonMapper json = JsonMapper.builder().build();
		Map<String, PromQuery> queries = queries(json.readTree(dashboard.toFile()), rateWindow);

		SampleAppProcess.Started started = SampleAppProcess.start(jar, List.of("-Xmx512m"),
				List.of("--management.endpoints.web.exposure.include=health,prometheus,ratelimits"), "/actuator/health");
		try (SampleAppProcess app = started.app()) {
			String base = "http://127.0.0.1:" + app.port();
			HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
			List<Map<PromQuery.Series, Double>> scrapes = new ArrayList<>();
			List<Double> times = new ArrayList<>();
			ScheduledExecutorService load = Executors.newScheduledThreadPool(4);
			long start = System.nanoTime();
			for (int user = 0; user < 8; user++) {
				String id = "user-" + user;
				load.scheduleAtFixedRate(() -> run(http, base, id), user * 250L, 2_000, TimeUnit.MILLISECONDS);
			}
			load.scheduleAtFixedRate(() -> {
				double at = (System.nanoTime() - start) / 1e9;
				if (at >= noisyFrom && at < noisyUntil) {
					run(http, base, "runaway-agent");
				}
			}, 0, 100, TimeUnit.MILLISECONDS);
			for (int second = 0; second <= seconds; second++) {
				long due = start + TimeUnit.SECONDS.toNanos(second);
				long wait = due - System.nanoTime();
				if (wait > 0) {
					TimeUnit.NANOSECONDS.sleep(wait);
				}
				times.add((System.nanoTime() - start) / 1e9);
				scrapes.add(PromQuery.Series.scrape(get(http, base + "/actuator/prometheus")));
			}
			load.shutdownNow();
			String top = get(http, base + "/actuator/ratelimits/" + POLICY + "/top");
			double[] at = times.stream().mapToDouble(Double::doubleValue).toArray();
			List<ExperimentChart.Panel> panels = new ArrayList<>();
			StringBuilder table = new StringBuilder();
			queries.forEach((title, query) -> {
				Map<String, double[]> lines = new LinkedHashMap<>();
				for (int i = 0; i < at.length; i++) {
					int index = i;
					query.evaluate(scrapes, at, i).forEach((group, value) -> lines
						.computeIfAbsent(group, (g) -> filled(at.length))[index] = value);
				}
				List<ExperimentChart.Series> series = new ArrayList<>();
				String[] colors = { "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd" };
				lines.forEach((group, values) -> {
					series.add(new ExperimentChart.Series(group, colors[series.size() % colors.length], values));
					table.append("| ").append(title).append(" | `").append(group).append("` | ")
						.append(String.format("%.2f", peak(values))).append(" |\n");
				});
				panels.add(new ExperimentChart.Panel(title, false, series));
			});
			Files.createDirectories(chart.toAbsolutePath().getParent());
			ExperimentChart.write(chart, "The sample with a runaway agent from " + noisyFrom + " s to " + noisyUntil
					+ " s, through the dashboard's queries", at, panels, 0);
			JsonNode topJson = json.readTree(top);
			String report = report(seconds, noisyFrom, noisyUntil, rateWindow, chart, page, table, topJson,
					String.join(" ", args));
			Files.writeString(page, report);
			System.out.println(report);
		}
	}

	private static Map<String, PromQuery> queries(JsonNode dashboard, int rateWindow) {
		Map<String, PromQuery> queries = new LinkedHashMap<>();
		for (JsonNode panel : dashboard.get("panels")) {
			String title = panel.path("title").asString();
			if (!PANELS.contains(title) || !panel.has("targets")) {
				continue;
			}
			String expression = panel.get("targets").get(0).get("expr").asString()
				.replace("$policy", POLICY)
				.replace("$__rate_interval", rateWindow + "s");
			queries.put(title, PromQuery.parse(expression));
		}
		if (queries.size() != PANELS.size()) {
			throw new IllegalStateException("The dashboard lacks a panel of " + PANELS + ": found " + queries.keySet());
		}
		return queries;
	}

	private static String report(int seconds, int noisyFrom, int noisyUntil, int rateWindow, Path chart, Path page,
			StringBuilder table, JsonNode top, String args) {
		StringBuilder text = new StringBuilder();
		text.append("# A noisy neighbour, through the dashboard\n\n")
			.append("Generated by `NoisyNeighbourRun`; rerun it rather than editing the figures:\n\n")
			.append("```\nmvn -q -pl benchmarks -am package -DskipTests\n")
			.append("java -cp benchmarks/target/benchmarks.jar dev.ratelimit.benchmarks.NoisyNeighbourRun")
			.append(args.isEmpty() ? "" : " " + args)
			.append("\n```\n\n")
			.append("The sample app (memory backend) for ").append(seconds)
			.append(" s: eight users run an agent every 2 s (`POST /agent/run`, plan `free`: 5 at once, then 1 per second), ")
			.append("within their limit; from ").append(noisyFrom).append(" s to ").append(noisyUntil)
			.append(" s `runaway-agent` runs one every 100 ms. `/actuator/prometheus` is scraped every second, and the ")
			.append("dashboard's panels below are its own queries (`docs/monitoring/grafana-dashboard.json`) evaluated ")
			.append("over the scrapes, `$policy` = `").append(POLICY).append("`, `$__rate_interval` = ")
			.append(rateWindow).append("s.\n\n")
			.append("![The run through the dashboard's queries](")
			.append(page.toAbsolutePath().getParent().relativize(chart.toAbsolutePath())).append(")\n\n")
			.append("| panel | series | peak |\n|---|---|---|\n").append(table)
			.append("\nAt the end of the run, `GET /actuator/ratelimits/").append(POLICY).append("/top` answered (first entries):\n\n")
			.append("| ranking | key | refusals | units | remaining now |\n|---|---|---|---|---|\n");
		for (String ranking : List.of("byRefusals", "byUnits")) {
			int listed = 0;
			for (JsonNode entry : top.get(ranking)) {
				if (listed++ == 3) {
					break;
				}
				text.append("| ").append(ranking).append(" | `").append(entry.get("key").asString()).append("` | ")
					.append(entry.get("refusals").asLong()).append(" | ").append(entry.get("units").asString())
					.append(" | ").append(entry.path("state").path("remaining").asString()).append(" |\n");
			}
		}
		return text.toString();
	}

	private static double[] filled(int length) {
		double[] values = new double[length];
		java.util.Arrays.fill(values, Double.NaN);
		return values;
	}

	private static double peak(double[] values) {
		double peak = 0;
		for (double value : values) {
			if (!Double.isNaN(value)) {
				peak = Math.max(peak, value);
			}
		}
		return peak;
	}

	private static void run(HttpClient http, String base, String user) {
		try {
			http.send(HttpRequest.newBuilder(URI.create(base + "/agent/run"))
				.header("X-User-Id", user)
				.POST(HttpRequest.BodyPublishers.noBody())
				.timeout(Duration.ofSeconds(5))
				.build(), HttpResponse.BodyHandlers.discarding());
		}
		catch (IOException ex) {
			System.err.println("call failed: " + ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static String get(HttpClient http, String url) throws IOException, InterruptedException {
		HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5))
			.build(), HttpResponse.BodyHandlers.ofString());
		if (response.statusCode() != 200) {
			throw new IOException(url + " answered " + response.statusCode() + ": " + response.body());
		}
		return response.body();
	}

}
