package dev.ratelimit.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.ratelimit.Limits;
import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.budget.Amounts;
import dev.ratelimit.budget.Reservation;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.core.RateLimitBackendUnavailableException;
import dev.ratelimit.core.RateLimitException;
import dev.ratelimit.support.RedisServerFixture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.fail;

/**
 * The Grafana dashboard and the Prometheus alert rules under
 * {@code docs/monitoring} cannot drift from the meters: an application with the
 * starter and a Prometheus registry takes decisions of every kind (rate limit
 * allowed and denied, a budget spent and refused, caps, a shed call, an
 * overflowing in-memory store, then Redis killed so that the failure modes
 * decide), its scrape is read as Prometheus reads it, and every metric named in
 * every query must be in it, with every label the query selects or groups by
 * (and every literal value it selects). Renaming a meter, a tag or an outcome
 * fails here, not on a dashboard at 3 a.m. The dashboard's {@code Limit}
 * variable must filter every per-limit series it reads, and its panels read the
 * data source Grafana asks for on import ({@code DS_PROMETHEUS}).
 */
class MonitoringQueriesTests {

	/** Maven runs tests in the module directory; the docs are beside it. */
	private static final Path MONITORING = Path.of("..", "docs", "monitoring");

	/** A server of this class's own: the test kills it to see the failure modes decide. */
	private static final RedisServerFixture redis = RedisServerFixture.start();

	/** Labels Prometheus adds to every series of a target, which no scrape carries. */
	private static final Set<String> TARGET_LABELS = Set.of("instance", "job");

	private static final Pattern METRIC = Pattern.compile("(?<![\\w:])(rate_limit_[a-zA-Z0-9_:]*)");

	private static final Pattern SELECTOR = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)?\\{([^}]*)}");

	private static final Pattern MATCHER = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!~|!=|=)\\s*\"([^\"]*)\"");

	private static final Pattern GROUPING = Pattern.compile("\\b(by|without)\\s*\\(([^)]*)\\)");

	private static final Pattern LABEL_VALUES = Pattern.compile("label_values\\(\\s*(\\w+)\\s*,\\s*(\\w+)\\s*\\)");

	private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})?\\s+\\S+.*$");

	private static final Pattern SAMPLE_LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

	private static final Pattern TEMPLATE_LABEL = Pattern.compile("\\$labels\\.(\\w+)");

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
				RateLimitAutoConfiguration.class))
		.withBean(PrometheusMeterRegistry.class, MonitoringQueriesTests::prometheus)
		.withPropertyValues("rate-limit.backend=redis", "spring.data.redis.host=127.0.0.1",
				"spring.data.redis.port=" + redis.port(), "rate-limit.redis.timeout=200ms",
				"rate-limit.memory.max-keys=2",
				"rate-limit.policies.api.capacity=5", "rate-limit.policies.api.refill=1/1h",
				"rate-limit.policies.api.failure-mode=local",
				"rate-limit.budgets.tenant-daily.amount=1.00", "rate-limit.budgets.tenant-daily.window=day",
				"rate-limit.budgets.tenant-daily.unit=USD",
				"rate-limit.concurrency.provider.permits=5",
				"rate-limit.concurrency.jobs.adaptive.algorithm=aimd",
				"rate-limit.concurrency.jobs.adaptive.initial-limit=1",
				"rate-limit.concurrency.jobs.adaptive.max-limit=1");

	/** The scrape, taken once: taking it kills this class's Redis. */
	private static Map<String, Map<String, Set<String>>> scraped;

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@Test
	void everyMetricAndLabelTheDashboardAndTheAlertsQueryIsScraped() throws IOException {
		Map<String, Map<String, Set<String>>> scraped = scraped();
		List<String> problems = new ArrayList<>();
		List<String> dashboard = dashboardQueries();
		List<Map<String, Object>> rules = alertRules();
		assertThat(dashboard).as("dashboard queries").hasSizeGreaterThan(10);
		assertThat(rules).as("alert rules").hasSizeGreaterThan(5);
		for (String query : dashboard) {
			check("grafana-dashboard.json: " + query, query, scraped, problems);
		}
		for (Map<String, Object> rule : rules) {
			String expr = (String) rule.get("expr");
			String where = "prometheus-alerts.yml " + rule.get("alert");
			check(where, expr, scraped, problems);
			checkAnnotationLabels(where, expr, rule, problems);
		}
		assertThat(problems).as("queries naming what the starter does not register (scraped: %s)", scraped.keySet())
			.isEmpty();
	}

	@Test
	void theLimitVariableFiltersEveryPanelThatReadsPerLimitSeries() throws IOException {
		Map<String, Map<String, Set<String>>> scraped = scraped();
		List<String> problems = new ArrayList<>();
		for (JsonNode panel : dashboard().get("panels")) {
			for (JsonNode expr : panel.findValues("expr")) {
				unfiltered(panel.get("title").asString() + ": " + expr.asString(), expr.asString(), scraped,
						problems);
			}
		}
		assertThat(problems).as("panels reading per-limit series that the Limit variable does not filter").isEmpty();
	}

	@Test
	void aPanelOfAPerLimitSeriesWithoutTheVariableIsReported() {
		Map<String, Map<String, Set<String>>> scraped = Map.of("rate_limit_decisions_total",
				Map.of("policy", Set.of("api")), "rate_limit_budget_spent_USD_total", Map.of("budget", Set.of("daily")),
				"rate_limit_redis_silent", Map.of());
		List<String> problems = new ArrayList<>();
		unfiltered("q1", "sum by (policy) (rate(rate_limit_decisions_total{outcome=\"denied\"}[5m]))", scraped,
				problems);
		unfiltered("q2", "sum(rate(rate_limit_decisions_total[5m]))", scraped, problems);
		unfiltered("q3", "sum by (budget) (rate({__name__=~\"rate_limit_budget_spent(_.+)?_total\"}[5m]))", scraped,
				problems);
		unfiltered("q4", "sum by (budget) (rate({__name__=~\"rate_limit_budget_spent(_.+)?_total\", "
				+ "budget=~\"$policy\"}[5m])) + sum(rate(rate_limit_decisions_total{policy=~\"$policy\"}[5m]))",
				scraped, problems);
		unfiltered("q5", "max(rate_limit_redis_silent)", scraped, problems);
		assertThat(problems).containsExactly("q1: rate_limit_decisions_total is not filtered by policy=~\"$policy\"",
				"q2: rate_limit_decisions_total is not filtered by policy=~\"$policy\"",
				"q3: rate_limit_budget_spent_USD_total is not filtered by budget=~\"$policy\"");
	}

	@Test
	void dashboardAsksForItsPrometheusDataSourceWhenImported() throws IOException {
		JsonNode dashboard = dashboard();
		JsonNode inputs = dashboard.get("__inputs");
		assertThat(inputs).as("__inputs").isNotNull().hasSize(1);
		assertThat(inputs.get(0).get("name").asString()).isEqualTo("DS_PROMETHEUS");
		assertThat(inputs.get(0).get("type").asString()).isEqualTo("datasource");
		assertThat(inputs.get(0).get("pluginId").asString()).isEqualTo("prometheus");
		List<JsonNode> dataSources = dashboard.findValues("datasource");
		assertThat(dataSources).as("data sources of the panels, their queries and the variables").hasSizeGreaterThan(10)
			.allSatisfy((dataSource) -> {
				assertThat(dataSource.get("type").asString()).isEqualTo("prometheus");
				assertThat(dataSource.get("uid").asString()).isEqualTo("${DS_PROMETHEUS}");
			});
		for (JsonNode panel : dashboard.get("panels")) {
			if (!"row".equals(panel.get("type").asString())) {
				assertThat(panel.get("datasource")).as("data source of %s", panel.get("title")).isNotNull();
			}
		}
	}

	@Test
	void alertRulesAreWellFormed() throws IOException {
		for (Map<String, Object> rule : alertRules()) {
			assertThat(rule).as("rule %s", rule.get("alert")).containsKeys("alert", "expr", "labels", "annotations");
			assertThat((String) rule.get("alert")).matches("RateLimit[A-Za-z]+");
			assertThat(map(rule.get("labels"))).as("labels of %s", rule.get("alert")).containsKey("severity");
			assertThat(map(rule.get("annotations"))).as("annotations of %s", rule.get("alert"))
				.containsKeys("summary", "description");
			if (rule.containsKey("for")) {
				assertThat(rule.get("for").toString()).matches("\\d+[smh]");
			}
		}
	}

	@Test
	void dashboardPanelsEachHaveATitleAndQueries() throws IOException {
		JsonNode dashboard = dashboard();
		assertThat(dashboard.get("uid").asString()).isEqualTo("rate-limit-starter");
		for (JsonNode panel : dashboard.get("panels")) {
			assertThat(panel.get("title").asString()).isNotBlank();
			if (!"row".equals(panel.get("type").asString())) {
				assertThat(panel.get("targets")).as("targets of %s", panel.get("title")).isNotEmpty();
			}
		}
	}

	@Test
	void aRenamedMeterIsReportedWithItsQuery() {
		Map<String, Map<String, Set<String>>> scraped = Map.of("rate_limit_decisions_total", Map.of("kind",
				Set.of("rate-limit"), "policy", Set.of("api"), "outcome", new TreeSet<>(List.of("allowed", "denied"))));
		List<String> problems = new ArrayList<>();
		check("q1", "sum by (policy) (rate(rate_limit_decision_total[5m]))", scraped, problems);
		check("q2", "sum by (tenant) (rate(rate_limit_decisions_total{outcome=\"refused\"}[5m]))", scraped, problems);
		check("q3", "sum by (policy) (rate(rate_limit_decisions_total{outcome=~\"allowed|denied\"}[5m]))", scraped,
				problems);
		check("q4", "sum by (budget) (rate({__name__=~\"rate_limit_budget_spend_.+_total\"}[5m]))", scraped, problems);
		assertThat(problems).containsExactly("q1: no metric rate_limit_decision_total",
				"q2: rate_limit_decisions_total has no label outcome=\"refused\" (has [allowed, denied])",
				"q2: rate_limit_decisions_total has no label tenant to group by",
				"q4: no metric matches {__name__=~\"rate_limit_budget_spend_.+_total\"}");
	}

	private static JsonNode dashboard() throws IOException {
		return JsonMapper.builder().build().readTree(Files.readString(MONITORING.resolve("grafana-dashboard.json")));
	}

	/** The scrape after decisions of every kind, taken at the first call. */
	private Map<String, Map<String, Set<String>>> scraped() {
		if (scraped == null) {
			scraped = scrapeAfterDecisionsOfEveryKind();
		}
		return scraped;
	}

	/**
	 * Reports each per-limit series of a query (one with a {@code policy} or
	 * {@code budget} label) that the {@code Limit} variable does not filter: its
	 * selector must match that label with {@code =~"$policy"}. Series of a whole
	 * store (no such label) may ignore the variable.
	 */
	private static void unfiltered(String where, String query, Map<String, Map<String, Set<String>>> scraped,
			List<String> problems) {
		// The strings' text blanked out at the same length: a metric named in a regex is no metric here.
		Matcher quoted = Pattern.compile("\"[^\"]*\"").matcher(query);
		StringBuilder masked = new StringBuilder(query);
		while (quoted.find()) {
			for (int i = quoted.start() + 1; i < quoted.end() - 1; i++) {
				masked.setCharAt(i, ' ');
			}
		}
		Matcher metric = METRIC.matcher(masked);
		while (metric.find()) {
			boolean selects = metric.end() < query.length() && query.charAt(metric.end()) == '{';
			String matchers = selects ? query.substring(metric.end(), query.indexOf('}', metric.end())) : "";
			checkFiltered(where, metric.group(1), matchers, scraped, problems);
		}
		Matcher selector = SELECTOR.matcher(query);
		while (selector.find()) {
			if (selector.group(1) == null) {
				for (String name : namesOf(null, selector.group(2), scraped)) {
					checkFiltered(where, name, selector.group(2), scraped, problems);
				}
			}
		}
	}

	private static void checkFiltered(String where, String name, String matchers,
			Map<String, Map<String, Set<String>>> scraped, List<String> problems) {
		Map<String, Set<String>> labels = scraped.getOrDefault(name, Map.of());
		for (String label : List.of("policy", "budget")) {
			String filter = label + "=~\"$policy\"";
			if (labels.containsKey(label) && !matchers.replace(" ", "").contains(filter)) {
				problems.add(where + ": " + name + " is not filtered by " + filter);
			}
		}
	}

	/** Runs decisions of every kind, Redis up and then down, and reads the scrape. */
	private Map<String, Map<String, Set<String>>> scrapeAfterDecisionsOfEveryKind() {
		Map<String, Map<String, Set<String>>> result = new HashMap<>();
		this.contextRunner.run((context) -> {
			assertThat(context).hasNotFailed();
			Limits limits = context.getBean(Limits.class);
			// A rate limit: 5 allowed (the last leaves nothing: near the limit), then one refused.
			for (int i = 0; i < 6; i++) {
				limits.tryAcquire("api", "ann", 1);
			}
			// A budget: 0.90 of 1.00 reserved (near the limit) and spent, then one refused.
			Reservation reservation = limits.reserve("tenant-daily", "acme", "0.90");
			reservation.settle(Amounts.parseMicros("0.90"));
			assertThatExceptionOfType(RateLimitException.class)
				.isThrownBy(() -> limits.reserve("tenant-daily", "acme", "0.50"));
			// A local cap of at most 2 keys in memory: the third key held at once overflows.
			try (Permit a = limits.permit("provider", "a"); Permit b = limits.permit("provider", "b");
					Permit c = limits.permit("provider", "c")) {
				assertThat(a).isNotNull();
			}
			// An adaptive cap of limit 1, full with a critical call, sheds a normal one.
			try (Permit critical = limits.permit("jobs", "critical")) {
				assertThatExceptionOfType(RateLimitException.class).isThrownBy(() -> limits.permit("jobs", "normal"));
			}
			// Redis gone: the budget fails closed, then the rate limit decides locally. Waited for without
			// reading a meter, so that a renamed one fails the check below, with its query, not this wait.
			redis.kill();
			Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
				try {
					limits.reserve("tenant-daily", "acme", "0.01");
					return false;
				}
				catch (RateLimitBackendUnavailableException closed) {
					return true;
				}
			});
			limits.tryAcquire("api", "bob", 1);
			PrometheusMeterRegistry registry = context.getBean(PrometheusMeterRegistry.class);
			result.putAll(parse(registry.scrape()));
		});
		return result;
	}

	/**
	 * The registry an application gets with micrometer-registry-prometheus, with
	 * the store latency's histogram that docs/metrics.md tells to publish
	 * ({@code management.metrics.distribution.percentiles-histogram.rate.limit.store.latency=true},
	 * which Boot's metrics auto-configuration turns into this filter).
	 */
	private static PrometheusMeterRegistry prometheus() {
		PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
		registry.config().meterFilter(new MeterFilter() {
			@Override
			public DistributionStatisticConfig configure(Meter.Id id, DistributionStatisticConfig config) {
				return id.getName().equals("rate.limit.store.latency")
						? DistributionStatisticConfig.builder().percentilesHistogram(true).build().merge(config)
						: config;
			}
		});
		return registry;
	}

	/** Metric name, label, values, from the Prometheus text format. */
	private static Map<String, Map<String, Set<String>>> parse(String scrape) {
		Map<String, Map<String, Set<String>>> metrics = new HashMap<>();
		for (String line : scrape.split("\n")) {
			Matcher sample = SAMPLE.matcher(line);
			if (line.startsWith("#") || !sample.matches()) {
				continue;
			}
			Map<String, Set<String>> labels = metrics.computeIfAbsent(sample.group(1), (name) -> new HashMap<>());
			if (sample.group(2) != null) {
				Matcher label = SAMPLE_LABEL.matcher(sample.group(2));
				while (label.find()) {
					labels.computeIfAbsent(label.group(1), (name) -> new TreeSet<>()).add(label.group(2));
				}
			}
		}
		return metrics;
	}

	/** Checks one query: its metrics, the labels of its selectors, groupings and label_values. */
	private static void check(String where, String query, Map<String, Map<String, Set<String>>> scraped,
			List<String> problems) {
		Matcher metric = METRIC.matcher(unquoted(query));
		while (metric.find()) {
			if (!scraped.containsKey(metric.group(1))) {
				problems.add(where + ": no metric " + metric.group(1));
			}
		}
		Matcher selector = SELECTOR.matcher(query);
		while (selector.find()) {
			Set<String> names = namesOf(selector.group(1), selector.group(2), scraped);
			if (names.isEmpty()) {
				problems.add(where + ": no metric matches {" + selector.group(2) + "}");
			}
			Matcher matcher = MATCHER.matcher(selector.group(2));
			while (matcher.find()) {
				for (String name : names) {
					checkMatcher(where, name, matcher, scraped, problems);
				}
			}
		}
		Matcher grouping = GROUPING.matcher(query);
		while (grouping.find()) {
			Set<String> names = new LinkedHashSet<>();
			String grouped = groupedExpression(query, grouping);
			Matcher inner = METRIC.matcher(unquoted(grouped));
			while (inner.find()) {
				names.add(inner.group(1));
			}
			Matcher innerSelector = SELECTOR.matcher(grouped);
			while (innerSelector.find()) {
				if (innerSelector.group(1) == null) {
					names.addAll(namesOf(null, innerSelector.group(2), scraped));
				}
			}
			for (String label : grouping.group(2).split(",")) {
				String trimmed = label.trim();
				for (String name : names) {
					if (!trimmed.isEmpty() && !TARGET_LABELS.contains(trimmed) && scraped.containsKey(name)
							&& !scraped.get(name).containsKey(trimmed)) {
						problems.add(where + ": " + name + " has no label " + trimmed + " to group by");
					}
				}
			}
		}
		Matcher labelValues = LABEL_VALUES.matcher(query);
		while (labelValues.find()) {
			Map<String, Set<String>> labels = scraped.get(labelValues.group(1));
			if (labels != null && !labels.containsKey(labelValues.group(2))) {
				problems.add(where + ": " + labelValues.group(1) + " has no label " + labelValues.group(2));
			}
		}
	}

	/** The query without the text of its strings: a metric named in a regex is matched as a regex. */
	private static String unquoted(String query) {
		return query.replaceAll("\"[^\"]*\"", "\"\"");
	}

	/** The metrics a selector names: its metric name, or those its {@code __name__} matcher matches. */
	private static Set<String> namesOf(String name, String matchers, Map<String, Map<String, Set<String>>> scraped) {
		if (name != null) {
			return Set.of(name);
		}
		Matcher matcher = MATCHER.matcher(matchers);
		while (matcher.find()) {
			if (matcher.group(1).equals("__name__") && matcher.group(2).equals("=~")) {
				Pattern regex = Pattern.compile(matcher.group(3));
				Set<String> names = new TreeSet<>();
				scraped.keySet().stream().filter((scrapedName) -> regex.matcher(scrapedName).matches()).forEach(names::add);
				return names;
			}
		}
		return Set.of();
	}

	private static void checkMatcher(String where, String name, Matcher matcher,
			Map<String, Map<String, Set<String>>> scraped, List<String> problems) {
		String label = matcher.group(1);
		String value = matcher.group(3);
		Map<String, Set<String>> labels = scraped.get(name);
		if (labels == null || label.equals("__name__") || TARGET_LABELS.contains(label)) {
			return;
		}
		Set<String> values = labels.get(label);
		if (values == null) {
			problems.add(where + ": " + name + " has no label " + label);
			return;
		}
		// Values from a dashboard variable are the user's; literal ones must exist.
		if (value.contains("$")) {
			return;
		}
		if (matcher.group(2).equals("=") && !values.contains(value)) {
			problems.add(where + ": " + name + " has no label " + label + "=\"" + value + "\" (has " + values + ")");
		}
		if (matcher.group(2).equals("=~") && value.matches("[\\w|-]+")
				&& List.of(value.split("\\|")).stream().noneMatch(values::contains)) {
			problems.add(where + ": " + name + " has no label " + label + "=~\"" + value + "\" (has " + values + ")");
		}
	}

	/** The expression an aggregation groups: the parenthesized one after {@code by (...)}, or before it. */
	private static String groupedExpression(String query, Matcher grouping) {
		int start = grouping.end();
		while (start < query.length() && Character.isWhitespace(query.charAt(start))) {
			start++;
		}
		if (start < query.length() && query.charAt(start) == '(') {
			return balanced(query, start, 1);
		}
		int end = grouping.start() - 1;
		while (end >= 0 && Character.isWhitespace(query.charAt(end))) {
			end--;
		}
		if (end >= 0 && query.charAt(end) == ')') {
			return balanced(query, end, -1);
		}
		return fail("no grouped expression for %s in %s", grouping.group(), query);
	}

	private static String balanced(String query, int from, int step) {
		int depth = 0;
		for (int i = from; i >= 0 && i < query.length(); i += step) {
			char c = query.charAt(i);
			depth += (c == '(') ? step : (c == ')') ? -step : 0;
			if (depth == 0) {
				return (step > 0) ? query.substring(from, i + 1) : query.substring(i, from + 1);
			}
		}
		return fail("unbalanced parentheses in %s", query);
	}

	/** The labels an alert's annotations print must be labels its expression keeps. */
	private static void checkAnnotationLabels(String where, String expr, Map<String, Object> rule,
			List<String> problems) {
		Set<String> kept = new TreeSet<>();
		Matcher grouping = GROUPING.matcher(expr);
		while (grouping.find()) {
			if (grouping.group(1).equals("by")) {
				for (String label : grouping.group(2).split(",")) {
					kept.add(label.trim());
				}
			}
		}
		Matcher used = TEMPLATE_LABEL.matcher(map(rule.get("annotations")).values().toString());
		while (used.find()) {
			if (!kept.contains(used.group(1))) {
				problems.add(where + ": its annotations print $labels." + used.group(1) + ", which " + expr.strip()
						+ " does not keep");
			}
		}
	}

	/** The queries of the dashboard's panels and of its variables. */
	private static List<String> dashboardQueries() throws IOException {
		JsonNode dashboard = dashboard();
		List<String> queries = new ArrayList<>();
		for (JsonNode expr : dashboard.findValues("expr")) {
			queries.add(expr.asString());
		}
		for (JsonNode variable : dashboard.get("templating").get("list")) {
			if (variable.has("definition")) {
				queries.add(variable.get("definition").asString());
				queries.add(variable.get("query").get("query").asString());
			}
		}
		return queries;
	}

	@SuppressWarnings("unchecked")
	private static List<Map<String, Object>> alertRules() throws IOException {
		Map<String, Object> file = new Yaml().load(Files.readString(MONITORING.resolve("prometheus-alerts.yml")));
		List<Map<String, Object>> rules = new ArrayList<>();
		for (Object group : (List<Object>) file.get("groups")) {
			rules.addAll((List<Map<String, Object>>) map(group).get("rules"));
		}
		return rules;
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> map(Object value) {
		assertThat(value).isInstanceOf(Map.class);
		return (Map<String, Object>) value;
	}

}
