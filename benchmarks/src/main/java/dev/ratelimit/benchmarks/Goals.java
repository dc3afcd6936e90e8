package dev.ratelimit.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.StringJoiner;

/**
 * The performance goals of the benchmarks, checked against one run's figures:
 * each with its target, what was measured and whether it was met.
 */
final class Goals {

	/** The commands the token-bucket script runs inside, which INFO commandstats counts too. */
	private static final Set<String> INSIDE_TOKEN_BUCKET = Set.of("time", "get", "set", "del");

	private record Goal(String name, String target, String measured, boolean met) {
	}

	private final List<Goal> goals = new ArrayList<>();

	/** What counting a decision into the heavy-hitter sketches may cost (about three times what it costs now). */
	private static final double HEAVY_HITTERS_NANOS = 150;

	void inMemory(List<InMemoryRow> rows) {
		StringJoiner ratios = new StringJoiner("; ");
		boolean faster = true;
		double mostBytes = 0;
		for (InMemoryRow ours : rows) {
			if (!ours.limiter().equals("ours")) {
				continue;
			}
			mostBytes = Math.max(mostBytes, ours.bytes());
			Optional<InMemoryRow> bucket4j = rows.stream()
				.filter((row) -> row.limiter().equals("bucket4jLockFree") && row.threads() == ours.threads()
						&& row.keys() == ours.keys())
				.findFirst();
			if (bucket4j.isPresent()) {
				faster &= ours.nanos() <= bucket4j.get().nanos();
				ratios.add(String.format(Locale.ROOT, "%d thread(s), %,d key(s): %s", ours.threads(), ours.keys(),
						InMemoryRow.ratio(ours, bucket4j.get())));
			}
		}
		this.goals.add(new Goal("In-memory: time per decision", "≤ Bucket4j's (ours / Bucket4j ≤ 1.00×)",
				ratios.toString(), faster));
		this.goals.add(new Goal("In-memory: allocation per decision", "0 B/op",
				String.format(Locale.ROOT, "at most %.2f B/op", mostBytes), mostBytes < 1));
		heavyHitters(rows);
	}

	/**
	 * Issue 30's sketches on the admitted path: what counting an admitted
	 * decision into its limit's heavy hitters costs ({@code heavyHittersAlone}),
	 * the goal, and beside it what it added to the decision in the same run
	 * ({@code oursWithHeavyHitters} against {@code ours}): a difference of two
	 * figures that each move by ± 100 ns with two threads on one key, so it
	 * shows an interaction the sketch alone would miss but cannot carry the goal.
	 */
	private void heavyHitters(List<InMemoryRow> rows) {
		StringJoiner alone = new StringJoiner("; ");
		StringJoiner added = new StringJoiner("; ");
		boolean met = true;
		for (InMemoryRow sketch : rows) {
			if (!sketch.limiter().equals("heavyHittersAlone")) {
				continue;
			}
			met &= sketch.nanos() <= HEAVY_HITTERS_NANOS && sketch.bytes() < 1;
			alone.add(String.format(Locale.ROOT, "%d thread(s), %,d key(s): %.0f ± %.0f ns, %.2f B/op",
					sketch.threads(), sketch.keys(), sketch.nanos(), sketch.error(), sketch.bytes()));
			Optional<InMemoryRow> with = find(rows, "oursWithHeavyHitters", sketch);
			Optional<InMemoryRow> without = find(rows, "ours", sketch);
			if (with.isPresent() && without.isPresent()) {
				added.add(String.format(Locale.ROOT, "%d/%,d: %+.0f ns", sketch.threads(), sketch.keys(),
						with.get().nanos() - without.get().nanos()));
			}
		}
		if (alone.length() > 0) {
			this.goals.add(new Goal("In-memory: heavy hitters, counting an admitted decision into its limit's sketch",
					"≤ " + (int) HEAVY_HITTERS_NANOS + " ns, 0 B/op",
					alone + ((added.length() > 0) ? " (added to the decision, threads/keys: " + added + ")" : ""),
					met));
		}
	}

	private static Optional<InMemoryRow> find(List<InMemoryRow> rows, String limiter, InMemoryRow like) {
		return rows.stream()
			.filter((row) -> row.limiter().equals(limiter) && row.threads() == like.threads()
					&& row.keys() == like.keys())
			.findFirst();
	}

	void redis(List<RedisDecisionBenchmark.Result> rows) {
		StringJoiner versusIncr = new StringJoiner("; ");
		boolean fastEnough = true;
		for (int keys : new int[] { 1, 10_000 }) {
			Optional<RedisDecisionBenchmark.Result> ours = find(rows, "ours (", keys);
			Optional<RedisDecisionBenchmark.Result> incr = find(rows, "plain INCR", keys);
			if (ours.isPresent() && incr.isPresent()) {
				double ratio = ours.get().perSecond() / incr.get().perSecond();
				fastEnough &= ratio >= 0.85;
				versusIncr.add(String.format(Locale.ROOT, "%,d key(s): %.2f×", keys, ratio));
			}
		}
		this.goals.add(new Goal("Redis: throughput against plain INCR (64 callers)", "≥ 0.85×", versusIncr.toString(),
				fastEnough));
		Optional<RedisDecisionBenchmark.Result> ours = find(rows, "ours (", 1);
		Optional<RedisDecisionBenchmark.Result> bucket4j = find(rows, "Bucket4j", 1);
		if (ours.isPresent() && bucket4j.isPresent()) {
			double ratio = ours.get().perSecond() / bucket4j.get().perSecond();
			this.goals.add(new Goal("Redis: throughput against Bucket4j's Lettuce proxy, one hot key", "≥ 3×",
					String.format(Locale.ROOT, "%.1f×", ratio), ratio >= 3));
		}
		StringJoiner scripts = new StringJoiner("; ");
		boolean one = true;
		for (RedisDecisionBenchmark.Result result : rows) {
			if (result.name().startsWith("ours (")) {
				// INFO commandstats also counts what a script runs inside: the token bucket's TIME, GET and
				// SET (DEL when a bucket fills up). Anything else, or any of them more than once a decision,
				// was sent besides the script.
				boolean onlyInside = result.commands().entrySet().stream()
					.filter((e) -> !e.getKey().endsWith(".usec") && !RedisDecisionBenchmark.SCRIPTED.contains(e.getKey()))
					.allMatch((e) -> INSIDE_TOKEN_BUCKET.contains(e.getKey())
							&& e.getValue() <= result.decisions() * 1.005);
				one &= Math.abs(result.scriptsPerDecision() - 1) < 0.005 && onlyInside;
				scripts.add(String.format(Locale.ROOT, "%,d key(s): %.3f script calls (FCALL), %s", result.keys(),
						result.scriptsPerDecision(), onlyInside ? "nothing else" : "and more: " + result.commands()));
			}
		}
		this.goals.add(new Goal("Redis: commands sent per decision", "exactly 1", scripts.toString(), one));
	}

	void http(List<HttpBenchmark.Row> rows) {
		http(rows, WebStack.SERVLET);
	}

	/** The HTTP goals of one stack's run; the reactive stack's are named {@code HTTP (WebFlux)}. */
	void http(List<HttpBenchmark.Row> rows, WebStack stack) {
		for (HttpBenchmark.GoalCheck check : HttpBenchmark.goals(rows, stack)) {
			this.goals.add(new Goal(check.name(), check.target(), check.measured(), check.met()));
		}
	}

	void gateway(List<HttpBenchmark.GoalCheck> checks) {
		checks.forEach((check) -> this.goals.add(new Goal(check.name(), check.target(), check.measured(), check.met())));
	}

	/**
	 * Two threads on one hot key, from the long run: at or below Bucket4j's time,
	 * and told apart from it by the error bars (or, when both are within each
	 * other's bars, met only if ours is at or below even at the bars' ends).
	 */
	void hotKey(List<InMemoryRow> rows) {
		Optional<InMemoryRow> ours = rows.stream().filter((r) -> r.limiter().equals("ours")).findFirst();
		Optional<InMemoryRow> bucket4j = rows.stream().filter((r) -> r.limiter().equals("bucket4jLockFree")).findFirst();
		if (ours.isEmpty() || bucket4j.isEmpty()) {
			return;
		}
		InMemoryRow a = ours.get();
		InMemoryRow b = bucket4j.get();
		boolean below = a.nanos() <= b.nanos();
		boolean told = a.nanos() + a.error() < b.nanos() - b.error() || a.nanos() - a.error() > b.nanos() + b.error();
		this.goals.add(new Goal("In-memory: two threads on one hot key, against Bucket4j",
				"≤ Bucket4j's, error bars apart",
				String.format(Locale.ROOT, "%.1f ± %.1f against %.1f ± %.1f ns (%s; %s)", a.nanos(), a.error(),
						b.nanos(), b.error(), InMemoryRow.ratio(a, b), told ? "bars apart" : "bars overlap"),
				below && told));
	}

	void serverTime(List<RedisServerTimeBenchmark.Row> rows) {
		RedisServerTimeBenchmark.Verdict verdict = RedisServerTimeBenchmark.oursWithinFloor(rows);
		this.goals.add(new Goal("Redis: server time per token-bucket decision against the minimal GCRA script",
				String.format(Locale.ROOT, "≤ %.1f×", RedisServerTimeBenchmark.GOAL_WITHIN_FLOOR), verdict.measured(),
				verdict.met()));
	}

	void startup(List<StartupBenchmark.Row> rows) {
		Optional<StartupBenchmark.Row> starter = rows.stream().filter((r) -> r.variant().equals("starter")).findFirst();
		Optional<StartupBenchmark.Row> disabled = rows.stream().filter((r) -> r.variant().equals("disabled")).findFirst();
		if (starter.isEmpty() || Double.isNaN(starter.get().cpuShare())) {
			return;
		}
		String measured = String.format(Locale.ROOT, "%+.1f%% (%.2f CPU s; without the starter %.2f)",
				starter.get().cpuShare() * 100, starter.get().cpuSeconds(),
				starter.get().cpuSeconds() / (1 + starter.get().cpuShare()));
		if (disabled.isPresent() && !Double.isNaN(disabled.get().cpuShare())) {
			measured += String.format(Locale.ROOT, "; rate-limit.enabled=false %+.1f%%", disabled.get().cpuShare() * 100);
		}
		// For comparison only: the goal is ours.
		Optional<StartupBenchmark.Row> bucket4j = rows.stream().filter((r) -> r.variant().equals("bucket4j")).findFirst();
		if (bucket4j.isPresent() && bucket4j.get().failure() != null) {
			measured += "; Bucket4j's starter did not start (see the table)";
		}
		else if (bucket4j.isPresent() && !Double.isNaN(bucket4j.get().cpuShare())) {
			measured += String.format(Locale.ROOT, "; Bucket4j's starter %+.1f%%", bucket4j.get().cpuShare() * 100);
		}
		this.goals.add(new Goal("Start-up: CPU the starter adds to the sample app", String.format(Locale.ROOT, "< %.0f%%",
				StartupBenchmark.GOAL_SHARE * 100), measured, starter.get().cpuShare() < StartupBenchmark.GOAL_SHARE));
	}

	void accuracy(AccuracyBenchmark.Report report) {
		double worstError = 0;
		boolean neverAbove = true;
		for (AccuracyBenchmark.RateRow row : report.rates()) {
			worstError = Math.max(worstError, Math.abs(row.errorPercent()));
			neverAbove &= row.admitted() <= row.allowed();
		}
		if (!report.rates().isEmpty()) {
			this.goals.add(new Goal("Accuracy: admitted rate, 10/s to 100,000/s, memory and Redis", "within ±1%",
					String.format(Locale.ROOT, "worst %.2f%%", worstError), worstError <= 1));
			this.goals.add(new Goal("Accuracy: never above burst + rate × time (single key)", "never", neverAbove
					? "never above" : "above in at least one run (see the table)", neverAbove));
		}
		StringJoiner fleet = new StringJoiner("; ");
		boolean fleetBelow = true;
		for (AccuracyBenchmark.FleetRow row : report.fleet()) {
			boolean below = row.admitted() <= row.allowed() && (row.prefetch() > 0 || row.policy().startsWith("fixed")
					? row.worst() <= row.bound() : true);
			fleetBelow &= below;
			fleet.add(String.format(Locale.ROOT, "%s, prefetch %s: %,d of %,d", row.policy(),
					(row.prefetch() > 0) ? row.prefetch() : "off", row.admitted(), row.allowed()));
		}
		if (!report.fleet().isEmpty()) {
			this.goals.add(new Goal("Accuracy: 4 instances × 64 threads, admitted against the limit",
					"never above (prefetching: within its bound)", fleet.toString(), fleetBelow));
		}
	}

	/** Issue 29's goals for the adaptive cap under a retry storm ({@link AdaptiveCapExperiment}). */
	void adaptive(List<AdaptiveCapExperiment.Row> rows) {
		if (rows.isEmpty()) {
			return;
		}
		AdaptiveCapReport.Verdicts verdicts = AdaptiveCapReport.verdicts(rows);
		this.goals.add(new Goal("Adaptive cap under a retry storm: goodput at 5× capacity", "≥ 90% of capacity",
				verdicts.goodput(), verdicts.goodputMet()));
		this.goals.add(new Goal("Adaptive cap: critical calls served while critical demand alone is under capacity",
				"all", verdicts.criticalServed(), verdicts.criticalServedMet()));
		this.goals.add(new Goal("Adaptive cap: critical p99 at 5× capacity", "≤ 2× the unloaded p99",
				verdicts.criticalP99(), verdicts.criticalP99Met()));
	}

	void overload(OverloadBenchmark.Report report) {
		this.goals.add(new Goal("Overload: decisions that fall to the failure mode (sample, 2 instances on one Redis, "
				+ "64 clients, server CPU saturated)", "≤ 0.1%", report.fallbackCounts(), report.fallbackPercent() <= 0.1));
		this.goals.add(new Goal("Overload: passwords checked of 64 parallel wrong logins for one user (limit 5)",
				"≤ 5 in every trial", report.trials().size() + " trials: " + report.trials(), report.worstTrial() <= 5));
		this.goals.add(new Goal("Redis frozen 2 s under that load: passwords checked per instance while frozen",
				"≤ 5 (the limit once per instance)", "at most " + report.worstInstanceWhileFrozen(),
				report.worstInstanceWhileFrozen() <= 5));
		this.goals.add(new Goal("Redis frozen 2 s: decisions back on Redis after SIGCONT",
				"within one timeout and a probe (≤ 500 ms)", report.backMillis() + " ms", report.backMillis() <= 500));
	}

	/** Records a part of the run that did not complete, as a goal missed. */
	void failed(String part, Throwable failure) {
		String reason = String.valueOf(failure.getMessage()).replace('|', '/').replace('\n', ' ');
		this.goals.add(new Goal("Part " + part + " of the run", "completes", "failed: "
				+ failure.getClass().getSimpleName() + ": " + reason, false));
	}

	String table() {
		StringBuilder table = new StringBuilder("| Goal | Target | Measured | Met |\n|---|---|---|---|\n");
		for (Goal goal : this.goals) {
			table.append("| ").append(goal.name()).append(" | ").append(goal.target()).append(" | ")
				.append(goal.measured()).append(" | ").append(goal.met() ? "yes" : "**no**").append(" |\n");
		}
		return table.toString();
	}

	private static Optional<RedisDecisionBenchmark.Result> find(List<RedisDecisionBenchmark.Result> rows, String prefix,
			int keys) {
		return rows.stream().filter((row) -> row.name().startsWith(prefix) && row.keys() == keys).findFirst();
	}

}
