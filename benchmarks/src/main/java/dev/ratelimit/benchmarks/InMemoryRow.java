package dev.ratelimit.benchmarks;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One JMH result of {@link InMemoryDecisionBenchmark}: a limiter, a thread
 * count and a key count, with the time and the bytes allocated per decision.
 *
 * @param limiter the benchmark method: {@code ours}, {@code bucket4jLockFree},
 * {@code resilience4jAtomic}, {@code guava}, {@code sentinel} (a hot-parameter
 * rule, the key its parameter) or {@code sentinelResource} (a flow rule on one
 * resource, one key only)
 * @param threads the JMH threads
 * @param keys the number of keys
 * @param nanos the average time per decision
 * @param error the 99.9% confidence half-width of {@code nanos}
 * @param bytes the bytes allocated per decision ({@code gc.alloc.rate.norm})
 */
record InMemoryRow(String limiter, int threads, int keys, double nanos, double error, double bytes) {

	private static final List<String> LIMITERS = List.of("ours", "bucket4jLockFree", "resilience4jAtomic", "guava",
			"sentinel", "sentinelResource");

	/**
	 * One row per thread and key count, the limiters side by side; a limiter not
	 * run for a case (Sentinel's one resource on 10,000 keys) shows "–".
	 */
	static String table(List<InMemoryRow> rows) {
		Map<String, Map<String, InMemoryRow>> byCase = new LinkedHashMap<>();
		for (InMemoryRow row : rows) {
			byCase.computeIfAbsent(row.threads() + "/" + row.keys(), (k) -> new LinkedHashMap<>()).put(row.limiter(), row);
		}
		StringBuilder table = new StringBuilder();
		table.append("| Threads | Keys | ours ns | Bucket4j ns | Resilience4j ns | Guava ns | Sentinel hot-param ns "
				+ "| Sentinel one resource ns | ours / Bucket4j | ours B/op | Bucket4j B/op | Resilience4j B/op "
				+ "| Guava B/op | Sentinel hot-param B/op | Sentinel one resource B/op |\n");
		table.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
		for (Map<String, InMemoryRow> limiters : byCase.values()) {
			InMemoryRow any = limiters.values().iterator().next();
			table.append(String.format(Locale.ROOT, "| %d | %,d |", any.threads(), any.keys()));
			for (String limiter : LIMITERS) {
				InMemoryRow row = limiters.get(limiter);
				table.append((row == null) ? " – |" : Double.isNaN(row.error())
						? String.format(Locale.ROOT, " %.1f |", row.nanos())
						: String.format(Locale.ROOT, " %.1f ± %.1f |", row.nanos(), row.error()));
			}
			table.append(String.format(Locale.ROOT, " %s |", ratio(limiters.get("ours"), limiters.get("bucket4jLockFree"))));
			for (String limiter : LIMITERS) {
				InMemoryRow row = limiters.get(limiter);
				table.append((row != null) ? String.format(Locale.ROOT, " %.0f |", row.bytes()) : " – |");
			}
			table.append('\n');
		}
		return table.toString();
	}

	static String ratio(InMemoryRow ours, InMemoryRow theirs) {
		return (ours != null && theirs != null) ? String.format(Locale.ROOT, "%.2f×", ours.nanos() / theirs.nanos()) : "–";
	}

}
