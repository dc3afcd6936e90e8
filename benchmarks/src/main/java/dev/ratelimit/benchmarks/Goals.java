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

	/** The single caller's p99 with coalescing against one call per decision: "no worse", within this. */
	static final double SINGLE_CALLER_P99 = 1.05;

	void redis(List<RedisDecisionBenchmark.Result> rows, List<RedisDecisionBenchmark.Exactness> exactness) {
		// Judged where Redis comes nearest to saturating: callers that do not wait (a thread woken per decision
		// makes the one client CPU the limit first); the waiting callers' ratios are shown beside them.
		boolean async = rows.stream().anyMatch((row) -> row.name().startsWith(RedisDecisionBenchmark.ASYNC));
		StringJoiner versusIncr = new StringJoiner("; ");
		StringJoiner cpu = new StringJoiner("; ");
		StringJoiner versusOneCall = new StringJoiner("; ");
		boolean fastEnough = true;
		boolean cheapEnough = true;
		boolean faster = true;
		for (String mode : async ? List.of(RedisDecisionBenchmark.ASYNC, "") : List.of("")) {
			boolean judged = mode.equals(async ? RedisDecisionBenchmark.ASYNC : "");
			String label = mode.isEmpty() ? "waiting callers" : "callers not waiting";
			for (int threads : new int[] { 64, 256 }) {
				for (int keys : new int[] { 1, 10_000 }) {
					Optional<RedisDecisionBenchmark.Result> ours = find(rows, mode + RedisDecisionBenchmark.COALESCED,
							keys, threads);
					Optional<RedisDecisionBenchmark.Result> plain = find(rows, mode + RedisDecisionBenchmark.INCR, keys,
							threads);
					Optional<RedisDecisionBenchmark.Result> today = find(rows, mode + RedisDecisionBenchmark.ONE_CALL,
							keys, threads);
					String where = String.format(Locale.ROOT, "%s, %d, %,d key(s)", label, threads, keys);
					if (ours.isPresent() && plain.isPresent()) {
						double ratio = ours.get().perSecond() / plain.get().perSecond();
						fastEnough &= !judged || ratio >= ((keys == 1) ? 3 : 1.5);
						versusIncr.add(String.format(Locale.ROOT, "%s: %.2f×", where, ratio));
						if (keys > 1) {
							double perDecision = ours.get().redisCpuMicrosPerDecision();
							double perIncr = plain.get().redisCpuMicrosPerDecision();
							cheapEnough &= !judged || perDecision <= perIncr;
							cpu.add(String.format(Locale.ROOT, "%s, %d: %.2f against %.2f µs (%.2f×)", label, threads,
									perDecision, perIncr, perDecision / perIncr));
						}
					}
					if (ours.isPresent() && today.isPresent()) {
						double ratio = ours.get().perSecond() / today.get().perSecond();
						faster &= !judged || ratio >= 1;
						versusOneCall.add(String.format(Locale.ROOT, "%s: %.2f×", where, ratio));
					}
				}
			}
		}
		this.goals.add(new Goal("Redis, coalesced: decisions per second against one pipelined INCR per request "
				+ "(64 and 256 callers, Redis on its own CPU; judged on callers that do not wait)",
				"≥ 3× one hot key, ≥ 1.5× 10,000 keys", versusIncr.toString(), fastEnough && versusIncr.length() > 0));
		this.goals.add(new Goal("Redis, coalesced: Redis CPU per decision (INFO cpu, user + sys) against one INCR "
				+ "per request's, 10,000 keys", "≤ 1.00×", cpu.toString(), cheapEnough && cpu.length() > 0));
		this.goals.add(new Goal("Redis, coalesced: decisions per second against one call per decision",
				"≥ 1.00×", versusOneCall.toString(), faster && versusOneCall.length() > 0));
		exact(exactness);
		String coalesced = RedisDecisionBenchmark.COALESCED;
		String oneCall = RedisDecisionBenchmark.ONE_CALL;
		StringJoiner single = new StringJoiner("; ");
		boolean noWorse = true;
		for (int keys : new int[] { 1, 10_000 }) {
			Optional<RedisDecisionBenchmark.Result> ours = find(rows, coalesced, keys, 1);
			Optional<RedisDecisionBenchmark.Result> today = find(rows, oneCall, keys, 1);
			if (ours.isPresent() && today.isPresent()) {
				double ratio = ours.get().percentileMicros(0.99) / today.get().percentileMicros(0.99);
				noWorse &= ratio <= SINGLE_CALLER_P99;
				single.add(String.format(Locale.ROOT, "%,d key(s): %.0f against %.0f µs (%.2f×)", keys,
						ours.get().percentileMicros(0.99), today.get().percentileMicros(0.99), ratio));
			}
		}
		this.goals.add(new Goal("Redis, coalesced: one caller's p99 against one call per decision",
				String.format(Locale.ROOT, "no worse (≤ %.2f×)", SINGLE_CALLER_P99), single.toString(),
				noWorse && single.length() > 0));
		Optional<RedisDecisionBenchmark.Result> ours = find(rows, coalesced, 1, 64);
		Optional<RedisDecisionBenchmark.Result> bucket4j = find(rows, "Bucket4j Lettuce CAS proxy", 1, 64);
		if (ours.isPresent() && bucket4j.isPresent()) {
			double ratio = ours.get().perSecond() / bucket4j.get().perSecond();
			this.goals.add(new Goal("Redis: throughput against Bucket4j's Lettuce proxy, one hot key (64 callers)", "≥ 3×",
					String.format(Locale.ROOT, "%.1f×", ratio), ratio >= 3));
		}
		StringJoiner calls = new StringJoiner("; ");
		boolean atMostOne = true;
		for (RedisDecisionBenchmark.Result result : rows) {
			boolean isOneCall = result.name().startsWith(oneCall);
			if ((isOneCall || result.name().startsWith(coalesced)) && result.threads() == 64) {
				// INFO commandstats also counts what a script runs inside: the token bucket's TIME, GET and
				// SET (DEL when a bucket fills up). Anything else, or any of them more than once a decision,
				// was sent besides the script.
				boolean onlyInside = result.commands().entrySet().stream()
					.filter((e) -> !e.getKey().endsWith(".usec") && !RedisDecisionBenchmark.SCRIPTED.contains(e.getKey()))
					.allMatch((e) -> INSIDE_TOKEN_BUCKET.contains(e.getKey())
							&& e.getValue() <= result.decisions() * 1.005);
				double perDecision = result.scriptsPerDecision();
				atMostOne &= onlyInside && (isOneCall ? Math.abs(perDecision - 1) < 0.005 : perDecision <= 1.005);
				calls.add(String.format(Locale.ROOT, "%s, %,d key(s): %.3f FCALLs, %s",
						isOneCall ? "one call" : "coalesced", result.keys(), perDecision,
						onlyInside ? "nothing else" : "and more: " + result.commands()));
			}
		}
		this.goals.add(new Goal("Redis: calls sent per decision (64 callers)",
				"exactly 1 without coalescing, at most 1 with", calls.toString(), atMostOne));
	}

	/** Coalesced decisions admit nothing beyond a limit that binds; the others are shown beside them. */
	private void exact(List<RedisDecisionBenchmark.Exactness> exactness) {
		StringJoiner measured = new StringJoiner("; ");
		boolean exact = true;
		boolean any = false;
		for (RedisDecisionBenchmark.Exactness row : exactness) {
			if (row.name().startsWith(RedisDecisionBenchmark.COALESCED)) {
				exact &= row.beyond() == 0;
				any = true;
			}
			measured.add(String.format(Locale.ROOT, "%s, %d callers: %,d", row.name().replaceAll(" \\(.*\\)$", ""),
					row.threads(), row.beyond()));
		}
		this.goals.add(new Goal("Redis, coalesced: exact, admissions beyond a binding limit (one hot key, 64 and "
				+ "256 callers)", "0", measured.toString(), exact && any));
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
		String measured = String.format(Locale.ROOT, "%+.1f%% (median of %d starts, %.2f CPU s; without the starter "
				+ "%.2f); fastest starts %+.1f%%", starter.get().cpuShare() * 100, starter.get().runs(),
				starter.get().cpuSeconds(), starter.get().cpuSeconds() / (1 + starter.get().cpuShare()),
				starter.get().fastestShare() * 100);
		if (!Double.isNaN(starter.get().classesShare())) {
			measured += String.format(Locale.ROOT, "; classes loaded %+.1f%%", starter.get().classesShare() * 100);
		}
		if (disabled.isPresent() && !Double.isNaN(disabled.get().cpuShare())) {
			measured += String.format(Locale.ROOT, "; rate-limit.enabled=false %+.1f%%", disabled.get().cpuShare() * 100);
		}
		Optional<StartupBenchmark.Row> aot = rows.stream().filter((r) -> r.variant().equals("aot")).findFirst();
		if (aot.isPresent() && !Double.isNaN(aot.get().cpuShare())) {
			measured += String.format(Locale.ROOT, "; with Spring AOT %+.1f%% of the JVM start without the starter",
					aot.get().cpuShare() * 100);
		}
		// For comparison only: the goal is ours.
		Optional<StartupBenchmark.Row> bucket4j = rows.stream().filter((r) -> r.variant().equals("bucket4j")).findFirst();
		if (bucket4j.isPresent() && bucket4j.get().failure() != null) {
			measured += "; Bucket4j's starter did not start (see the table)";
		}
		else if (bucket4j.isPresent() && !Double.isNaN(bucket4j.get().cpuShare())) {
			measured += String.format(Locale.ROOT, "; Bucket4j's starter %+.1f%%", bucket4j.get().cpuShare() * 100);
		}
		Optional<StartupBenchmark.Row> resilience4j = rows.stream()
			.filter((r) -> r.variant().equals("resilience4j"))
			.findFirst();
		if (resilience4j.isPresent() && resilience4j.get().failure() != null) {
			measured += "; Resilience4j's starter did not start (see the table)";
		}
		else if (resilience4j.isPresent() && !Double.isNaN(resilience4j.get().cpuShare())) {
			// Its rate limiter applies to annotated methods only: its starter's cost, limiting nothing here.
			measured += String.format(Locale.ROOT, "; Resilience4j's starter (limiting nothing on the route) %+.1f%%",
					resilience4j.get().cpuShare() * 100);
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
			int keys, int threads) {
		return rows.stream()
			.filter((row) -> row.name().startsWith(prefix) && row.keys() == keys && row.threads() == threads)
			.findFirst();
	}

}
