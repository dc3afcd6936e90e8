package dev.ratelimit.benchmarks;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The few shapes of PromQL the dashboard under {@code docs/monitoring} uses,
 * evaluated over scrapes of {@code /actuator/prometheus} taken in a run, so
 * that a chart of the run shows what the dashboard would have shown:
 * {@code sum|max|min by (labels) (rate(metric{matchers}[range]))} or of a
 * gauge, and two of those divided or one multiplied by a number. Anything else
 * is refused with an {@link IllegalArgumentException}, and the caller skips
 * that panel.
 */
final class PromQuery {

	private static final Pattern AGGREGATE = Pattern.compile(
			"\\s*(sum|max|min) by \\(([^)]*)\\) \\((rate\\()?([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{([^}]*)\\})?(\\[(\\d+)s\\]\\))?\\)\\s*");

	private static final Pattern MATCHER = Pattern.compile("\\s*([a-zA-Z_]+)\\s*(=~|!=|=)\\s*\"([^\"]*)\"\\s*,?");

	private final List<Aggregate> terms = new ArrayList<>();

	private final List<Character> operators = new ArrayList<>();

	private double factor = 1;

	private PromQuery() {
	}

	/**
	 * Parses an expression, with the dashboard's variables already replaced.
	 * @param expression the expression
	 * @return the query
	 */
	static PromQuery parse(String expression) {
		PromQuery query = new PromQuery();
		String rest = expression.trim();
		Matcher scale = Pattern.compile("(.*)\\*\\s*([0-9.]+)\\s*$").matcher(rest);
		if (scale.matches()) {
			query.factor = Double.parseDouble(scale.group(2));
			rest = scale.group(1);
		}
		String[] parts = rest.split("\\s/\\s");
		if (parts.length > 2) {
			throw new IllegalArgumentException("unsupported: " + expression);
		}
		for (int i = 0; i < parts.length; i++) {
			query.terms.add(Aggregate.parse(parts[i], expression));
			if (i > 0) {
				query.operators.add('/');
			}
		}
		return query;
	}

	/**
	 * Evaluates the query at one scrape.
	 * @param scrapes every scrape of the run, in time order, each series' value by its name and labels
	 * @param times each scrape's time, in seconds
	 * @param at the index of the scrape to evaluate at
	 * @return the value per group of the {@code by} labels (as {@code label=value,...})
	 */
	Map<String, Double> evaluate(List<Map<Series, Double>> scrapes, double[] times, int at) {
		Map<String, Double> result = this.terms.get(0).evaluate(scrapes, times, at);
		if (this.terms.size() == 2) {
			Map<String, Double> divisor = this.terms.get(1).evaluate(scrapes, times, at);
			Map<String, Double> ratio = new TreeMap<>();
			result.forEach((group, value) -> {
				Double below = divisor.get(group);
				if (below != null && below > 0) {
					ratio.put(group, value / below);
				}
			});
			result = ratio;
		}
		if (this.factor != 1) {
			Map<String, Double> scaled = new TreeMap<>();
			result.forEach((group, value) -> scaled.put(group, value * this.factor));
			result = scaled;
		}
		return result;
	}

	/**
	 * One series of a scrape: its name and labels.
	 *
	 * @param name the metric's name
	 * @param labels its labels
	 */
	record Series(String name, Map<String, String> labels) {

		private static final Pattern LINE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)\\})?\\s+(\\S+).*");

		private static final Pattern LABEL = Pattern.compile("([a-zA-Z_]+)=\"((?:[^\"\\\\]|\\\\.)*)\",?");

		/**
		 * Reads a scrape in the Prometheus text format.
		 * @param text the scrape
		 * @return each series' value
		 */
		static Map<Series, Double> scrape(String text) {
			Map<Series, Double> values = new HashMap<>();
			for (String line : text.split("\n")) {
				if (line.isBlank() || line.startsWith("#")) {
					continue;
				}
				Matcher matcher = LINE.matcher(line);
				if (!matcher.matches()) {
					continue;
				}
				Map<String, String> labels = new LinkedHashMap<>();
				if (matcher.group(3) != null) {
					Matcher label = LABEL.matcher(matcher.group(3));
					while (label.find()) {
						labels.put(label.group(1), label.group(2));
					}
				}
				try {
					values.put(new Series(matcher.group(1), labels), Double.parseDouble(matcher.group(4)));
				}
				catch (NumberFormatException ex) {
					// NaN and the like: Double reads those; anything else is skipped
				}
			}
			return values;
		}

	}

	/** {@code agg by (labels) (rate(metric{matchers}[range]))}, or of the gauge itself. */
	private record Aggregate(String function, List<String> by, boolean rate, String metric,
			List<String[]> matchers, int rangeSeconds) {

		static Aggregate parse(String text, String expression) {
			Matcher matcher = AGGREGATE.matcher(text);
			if (!matcher.matches()) {
				throw new IllegalArgumentException("unsupported: " + expression);
			}
			List<String> by = new ArrayList<>();
			for (String label : matcher.group(2).split(",")) {
				if (!label.isBlank()) {
					by.add(label.trim());
				}
			}
			List<String[]> matchers = new ArrayList<>();
			if (matcher.group(6) != null) {
				Matcher each = MATCHER.matcher(matcher.group(6));
				while (each.find()) {
					matchers.add(new String[] { each.group(1), each.group(2), each.group(3) });
				}
			}
			boolean rate = matcher.group(3) != null;
			return new Aggregate(matcher.group(1), by, rate, matcher.group(4), matchers,
					rate ? Integer.parseInt(matcher.group(8)) : 0);
		}

		Map<String, Double> evaluate(List<Map<Series, Double>> scrapes, double[] times, int at) {
			Map<String, Double> groups = new TreeMap<>();
			int before = at;
			if (this.rate) {
				// The scrape closest to the start of the range, as PromQL's rate extrapolates over it.
				while (before > 0 && times[at] - times[before - 1] <= this.rangeSeconds) {
					before--;
				}
				if (before == at) {
					return groups;
				}
			}
			Map<Series, Double> now = scrapes.get(at);
			Map<Series, Double> then = scrapes.get(before);
			double span = times[at] - times[before];
			now.forEach((series, value) -> {
				if (!series.name().equals(this.metric) || !matches(series.labels())) {
					return;
				}
				double sample = value;
				if (this.rate) {
					// A series born inside the range started from 0.
					sample = Math.max(0, value - then.getOrDefault(series, 0.0)) / span;
				}
				StringBuilder group = new StringBuilder();
				for (String label : this.by) {
					group.append(group.isEmpty() ? "" : ",").append(label).append('=')
						.append(series.labels().getOrDefault(label, ""));
				}
				groups.merge(group.toString(), sample, switch (this.function) {
					case "max" -> Math::max;
					case "min" -> Math::min;
					default -> Double::sum;
				});
			});
			return groups;
		}

		private boolean matches(Map<String, String> labels) {
			for (String[] matcher : this.matchers) {
				String value = labels.getOrDefault(matcher[0], "");
				boolean match = switch (matcher[1]) {
					case "=" -> value.equals(matcher[2]);
					case "!=" -> !value.equals(matcher[2]);
					default -> value.matches(matcher[2]);
				};
				if (!match) {
					return false;
				}
			}
			return true;
		}

	}

}
