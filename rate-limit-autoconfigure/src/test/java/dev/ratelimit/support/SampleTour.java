package dev.ratelimit.support;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import tools.jackson.databind.JsonNode;

import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's tour of a sample app (servlet or reactive), over real HTTP on a
 * running app with its real clock: annotated methods with plans, a limit that
 * counts failed logins, a budget that reserves and settles, a streamed answer,
 * a route rule, the actuator endpoint, health and metrics. Each step asserts
 * what the README says and writes what it saw, without anything that depends
 * on timing, to a transcript: two runs of one app (say, processed ahead of time
 * and not) answered alike when their transcripts are equal.
 * <p>
 * It runs once per started app: the keys it uses are spent afterwards.
 */
public final class SampleTour {

	/** Seconds until the window ends, which only the clock decides. */
	private static final Pattern BUDGET_RESET = Pattern.compile(";t=\\d+");

	private final TestHttp http;

	private final List<String> transcript = new ArrayList<>();

	private SampleTour(TestHttp http) {
		this.http = http;
	}

	/**
	 * Starts a sample app's jar in a JVM of its own, checks that it started
	 * from the context it was asked to (the one Spring AOT generated, or one
	 * built at start-up), takes the tour and stops it.
	 * @param jar the packaged sample app
	 * @param application the simple name of its main class
	 * @param aot whether to start it with {@code -Dspring.aot.enabled=true}
	 * @return the transcript
	 */
	public static List<String> takeOn(Path jar, String application, boolean aot) {
		List<String> options = aot ? List.of("-Dspring.aot.enabled=true") : List.of();
		try (AppProcess app = AppProcess.start(jar, options, List.of(), Duration.ofMinutes(2))) {
			// Spring Boot says which context it starts: the generated one, or one built by reflection.
			if (aot) {
				assertThat(app.output()).contains("Starting AOT-processed " + application);
			}
			else {
				assertThat(app.output()).contains("Starting " + application).doesNotContain("AOT-processed");
			}
			List<String> transcript = take(TestHttp.on(app.port()));
			assertThat(app.output()).doesNotContain(" ERROR ");
			return transcript;
		}
	}

	/**
	 * Takes the tour.
	 * @param http a client of the running sample app
	 * @return the transcript, one line per thing seen
	 */
	public static List<String> take(TestHttp http) {
		SampleTour tour = new SampleTour(http);
		// A first answer takes a cold JVM's longest; spend it outside the steps that count on a short time.
		tour.see("health", http.get("/actuator/health").status());
		tour.agentRuns();
		tour.failedLogins();
		tour.chat();
		tour.chatStream();
		tour.routeRule();
		tour.endpoint();
		return List.copyOf(tour.transcript);
	}

	private void see(String step, Object what) {
		this.transcript.add(step + ": " + what);
	}

	private void agentRuns() {
		// Warm the annotated method up with a user of its own, so alice's five take well under a second.
		this.http.post("/agent/run", "{}", "X-User-Id", "warm-up", "Content-Type", "application/json");
		long start = System.nanoTime();
		Answer first = run("alice");
		assertThat(first.status()).isEqualTo(200);
		see("agent-runs free, first", first.status() + " " + first.rateLimitPolicy() + " " + first.rateLimit());
		assertThat(first.rateLimitPolicy()).isEqualTo("\"agent-runs\";q=5;w=5");
		assertThat(first.rateLimit()).isEqualTo("\"agent-runs\";r=4;t=1");
		int admitted = 1;
		Answer answer = run("alice");
		while (answer.status() == 200 && admitted < 20) {
			admitted++;
			answer = run("alice");
		}
		double seconds = (System.nanoTime() - start) / 1e9;
		// Five at once, then one a second: a slow machine sees the refill, never more.
		assertThat(admitted).isBetween(5, 5 + (int) Math.ceil(seconds));
		assertRefused(answer, "agent-runs", "/agent/run");
		see("agent-runs free, refused", answer.status() + " " + answer.rateLimitPolicy() + " Retry-After "
				+ answer.retryAfter() + " " + problem(answer));
		Answer pro = run("pro-alice");
		see("agent-runs pro", pro.status() + " " + pro.rateLimitPolicy() + " " + pro.rateLimit());
		assertThat(pro.rateLimitPolicy()).isEqualTo("\"agent-runs\";q=50;w=5");
		assertThat(pro.rateLimit()).isEqualTo("\"agent-runs\";r=49;t=1");
		Answer anonymous = this.http.post("/agent/run", "{}", "Content-Type", "application/json");
		see("agent-runs without a user", anonymous.status());
		assertThat(anonymous.status()).isEqualTo(400);
	}

	private Answer run(String user) {
		return this.http.post("/agent/run", "{}", "X-User-Id", user, "Content-Type", "application/json");
	}

	private void failedLogins() {
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			statuses.add(this.http.postJson("/login", "{\"username\":\"demo\",\"password\":\"guess\"}").status());
		}
		see("failed logins", statuses);
		assertThat(statuses).containsExactly(401, 401, 401, 401, 401, 429);
	}

	private void chat() {
		Answer answer = this.http.postJson("/agent/chat", "{\"prompt\":\"hello\",\"maxTokens\":1000}", "X-Tenant-Id",
				"acme");
		String budget = answer.header("Budget-Remaining");
		JsonNode body = answer.json();
		see("chat", answer.status() + " " + answer.rateLimitPolicy() + " " + answer.rateLimit() + " "
				+ ((budget != null) ? BUDGET_RESET.matcher(budget).replaceAll("") : null) + " " + body);
		assertThat(answer.status()).isEqualTo(200);
		assertThat(answer.rateLimitPolicy()).isEqualTo("\"tenant-chat\";q=10;w=2");
		assertThat(body.path("text").asString()).contains("hello");
		// Settled before the answer went out: the day's 1.00 less what the provider reported, not the estimate.
		BigDecimal cost = body.path("usage").path("costUsd").decimalValue();
		assertThat(cost).isPositive().isLessThan(new BigDecimal("0.002"));
		assertThat(budget).startsWith("\"tenant-daily\";w=\"day\";r=\""
				+ BigDecimal.ONE.subtract(cost).setScale(6, RoundingMode.UNNECESSARY).toPlainString()
				+ "\";q=\"1.000000\";u=\"USD\";t=");
	}

	private void chatStream() {
		Answer answer = this.http.postJson("/agent/chat/stream",
				"{\"prompt\":\"the answer is forty two\",\"maxTokens\":1000}", "X-Tenant-Id", "acme");
		List<String> events = new ArrayList<>();
		Matcher event = Pattern.compile("(?m)^event:\\s?(\\S+)").matcher(answer.body());
		while (event.find()) {
			events.add(event.group(1));
		}
		see("chat stream", answer.status() + " " + events);
		assertThat(answer.status()).isEqualTo(200);
		assertThat(events).containsExactly("token", "token", "token", "token", "token", "done");
	}

	private void routeRule() {
		// 40 at once against 20 at once and 10 a second: refusals, whatever the machine's speed.
		long start = System.nanoTime();
		List<CompletableFuture<Answer>> calls = new ArrayList<>();
		for (int i = 0; i < 40; i++) {
			calls.add(this.http.sendAsync("GET", "/api/hello"));
		}
		List<Answer> answers = calls.stream().map(CompletableFuture::join).toList();
		double seconds = (System.nanoTime() - start) / 1e9;
		long admitted = answers.stream().filter((answer) -> answer.status() == 200).count();
		assertThat(admitted).isBetween(20L, 20 + (long) Math.ceil(10 * seconds));
		assertThat(answers).allSatisfy((answer) -> {
			assertThat(answer.status()).isIn(200, 429);
			assertThat(answer.rateLimitPolicy()).isEqualTo("\"per-ip\";q=20;w=2");
		});
		Answer refused = answers.stream().filter((answer) -> answer.status() == 429).findFirst().orElseThrow();
		assertRefused(refused, "per-ip", "/api/hello");
		see("route rule", "200 and 429, " + refused.rateLimitPolicy() + " " + problem(refused));
	}

	private void endpoint() {
		JsonNode limits = this.http.get("/actuator/ratelimits").json();
		List<String> rateLimits = new ArrayList<>();
		for (JsonNode limit : limits.path("rateLimits")) {
			List<String> places = new ArrayList<>();
			limit.path("methods").forEach((method) -> places.add(method.path("method").asString()));
			limit.path("routes").forEach((route) -> places.add(route.path("pattern").asString()));
			rateLimits.add(limit.path("name").asString() + " " + limit.path("algorithm").asString() + " " + places);
		}
		see("endpoint rate limits", rateLimits);
		assertThat(rateLimits).contains("agent-runs token-bucket [dev.ratelimit.sample"
				+ (rateLimits.toString().contains("reactive") ? ".reactive" : "") + ".AgentController#run]",
				"per-ip token-bucket [/api/**]");
		List<String> others = new ArrayList<>();
		limits.path("budgets").forEach((budget) -> others.add("budget " + budget.path("name").asString()));
		limits.path("concurrency").forEach((cap) -> others.add("concurrency " + cap.path("name").asString()));
		see("endpoint budgets and caps", others);
		assertThat(others).containsExactly("budget tenant-daily", "concurrency provider");
		JsonNode alice = this.http.get("/actuator/ratelimits/agent-runs/alice").json();
		see("endpoint key", alice.path("policy").asString() + " " + alice.path("type").asString() + " "
				+ alice.path("key").asString() + " " + alice.path("storageKey").asString() + " limit "
				+ alice.path("limit").asInt());
		assertThat(alice.path("storageKey").asString()).isEqualTo("rl:agent-runs:{alice}");
		assertThat(alice.path("limit").asInt()).isEqualTo(5);
		int reset = this.http.delete("/actuator/ratelimits/agent-runs/alice").status();
		see("endpoint reset", reset);
		assertThat(reset).isEqualTo(405);
		// The rateLimit contributor's details show where the app shows health details (the servlet sample does).
		JsonNode health = this.http.get("/actuator/health").json();
		see("health", health.path("status").asString() + " " + health.path("components").path("rateLimit"));
		assertThat(health.path("status").asString()).isEqualTo("UP");
		JsonNode decisions = this.http.get("/actuator/metrics/rate.limit.decisions").json();
		see("metrics", decisions.path("name").asString());
		assertThat(decisions.path("measurements").path(0).path("value").asDouble()).isPositive();
	}

	private static void assertRefused(Answer answer, String policy, String instance) {
		assertThat(answer.status()).isEqualTo(429);
		assertThat(answer.retryAfter()).isEqualTo("1");
		assertThat(answer.header("Cache-Control")).isEqualTo("no-store");
		assertThat(answer.contentType()).startsWith("application/problem+json");
		JsonNode problem = answer.json();
		assertThat(problem.path("type").asString())
			.isEqualTo("https://iana.org/assignments/http-problem-types#quota-exceeded");
		assertThat(problem.path("instance").asString()).isEqualTo(instance);
		assertThat(problem.path("violated-policies").path(0).asString()).isEqualTo(policy);
	}

	private static String problem(Answer answer) {
		JsonNode problem = answer.json();
		return problem.path("type").asString() + " " + problem.path("violated-policies");
	}

}
