package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

import dev.ratelimit.benchmarks.LuaDecision.Send;
import dev.ratelimit.core.Algorithm;

/**
 * What a decision costs the Redis server, against the floor of a Lua decision:
 * {@code redis-benchmark} (50 clients, 10,000 keys) drives a
 * {@code redis-server} this program starts on a free port, one case after the
 * other in the same run. Per case: requests per second as
 * {@code redis-benchmark} reports them, the server time per call
 * ({@code usec_per_call} of the top-level command in {@code INFO commandstats},
 * reset before each case), the server process's CPU time per call (network and
 * parsing included) and the commands run inside per call.
 * <p>
 * Cases: plain {@code INCR} (the floor of a round trip); the minimal GCRA
 * script ({@link LuaDecision#minimalGcra()}, the floor of an exact decision in
 * Lua) as {@code EVALSHA} and as {@code FCALL}; our token-bucket decision, the
 * very command {@code RedisRateLimitBackend} sends on the limiter's connection
 * ({@link ProductionCommand}, checked before the run: an {@code FCALL} of
 * production's function library), and the script text it sends as
 * {@code EVALSHA} where Redis refuses functions. Each script's server time is
 * also shown over the floor's sent the same way; the goal is production's.
 * With {@code --instructions true}, every case then runs once more on a server
 * under callgrind ({@link Callgrind}) for its instructions per call, a figure
 * that other load on the machine does not change. With {@code --algorithm},
 * ours is a policy of another algorithm ({@code FIXED_WINDOW}, say), to see what
 * a decision of each costs; the goal is the token bucket's.
 * <p>
 * Run: {@code java -cp benchmarks/target/benchmarks.jar dev.ratelimit.benchmarks.RedisServerTimeBenchmark
 * [--requests 200000] [--warmup-requests 20000] [--rounds 2] [--clients 50] [--keys 10000]
 * [--instructions false] [--instruction-requests 20000] [--algorithm TOKEN_BUCKET]}; the
 * {@code redis-benchmark} binary is the one on the {@code PATH} or {@code -Dbenchmark.redis-benchmark}.
 */
public final class RedisServerTimeBenchmark {

	/** The goal of the issue: our server time per decision at most this many times the floor's. */
	public static final double GOAL_WITHIN_FLOOR = 1.1;

	/** Far longer than any case takes (200,000 calls at 15,000 a second or more). */
	private static final Duration REDIS_BENCHMARK_DEADLINE = Duration.ofMinutes(5);

	/** The key every call goes to: {@code redis-benchmark} replaces the marker; the braces make it a hash tag. */
	private static final String KEY = "rl:{__rand_int__}";

	private RedisServerTimeBenchmark() {
	}

	/**
	 * What a case is: the floor of a round trip, the floor of a Lua decision,
	 * ours as production sends it, or ours as it goes where Redis refuses
	 * functions (shown, but not the goal).
	 */
	enum Role {

		INCR, FLOOR, OURS, FALLBACK

	}

	/**
	 * One command measured.
	 * @param name what the table calls it
	 * @param role what it stands for
	 * @param send how a script is sent; {@code null} for INCR
	 * @param decision the script; {@code null} for INCR
	 */
	record Case(String name, Role role, Send send, LuaDecision decision) {

		static Case incr() {
			return new Case("plain INCR", Role.INCR, null, null);
		}

		static Case lua(Role role, LuaDecision decision, Send send) {
			return new Case(decision.name(), role, send, decision);
		}

		static Case lua(String name, Role role, LuaDecision decision, Send send) {
			return new Case(name, role, send, decision);
		}

		List<String> command(String key) {
			return (this.decision == null) ? List.of("INCR", key) : this.decision.command(this.send, key);
		}

		/** The command's name in {@code INFO commandstats}. */
		String statName() {
			return command(KEY).get(0).toLowerCase(Locale.ROOT);
		}

		String sentAs() {
			return (this.send == null) ? "INCR" : this.send.name();
		}

		/** The server's function running the command, as its binary names it. */
		String serverFunction() {
			return switch (statName()) {
				case "incr" -> "incrCommand";
				case "evalsha" -> "evalShaCommand";
				case "fcall" -> "fcallCommand";
				default -> throw new IllegalStateException("No server function known for " + statName());
			};
		}

	}

	/**
	 * The cases, in the order they run: the one place that says what is
	 * measured. A new form of ours (say, production's own function library) is
	 * one more line.
	 * @param algorithm the algorithm of our policy
	 * @param oursArguments what the backend sends after the key, as captured
	 * @return the cases
	 */
	static List<Case> cases(Algorithm algorithm, List<String> oursArguments) {
		LuaDecision floor = LuaDecision.minimalGcra();
		LuaDecision ours = LuaDecision.ours(algorithm, oursArguments);
		return List.of(Case.incr(), Case.lua(Role.FLOOR, floor, Send.EVALSHA), Case.lua(Role.FLOOR, floor, Send.FCALL),
				Case.lua(Role.OURS, ours, Send.FCALL),
				Case.lua(ours.name() + " (functions refused)", Role.FALLBACK, ours, Send.EVALSHA));
	}

	/**
	 * One case's figures: the timed ones from its round with the least server
	 * time per call, the instruction counts (NaN unless asked for) from their own
	 * run under callgrind.
	 * @param name the case
	 * @param role what it stands for
	 * @param sentAs INCR, EVALSHA or FCALL
	 * @param requestsPerSecond as {@code redis-benchmark} reports it
	 * @param serverMicros {@code usec_per_call} of the top-level command
	 * @param cpuMicros the server process's CPU time (user and system) per call
	 * @param inside the commands run inside, per call
	 * @param instructions instructions per call in the command's function and all it calls
	 * @param serverInstructions instructions per call of the whole server (network and parsing included)
	 * @param overFloor {@code serverMicros} over the floor's sent the same way; NaN for INCR
	 * @param instructionsOverFloor {@code instructions} over the floor's sent the same way
	 * @param clients {@code redis-benchmark}'s connections
	 * @param keys distinct keys
	 */
	record Row(String name, Role role, String sentAs, double requestsPerSecond, double serverMicros,
			double cpuMicros, Map<String, Double> inside, double instructions, double serverInstructions,
			double overFloor, double instructionsOverFloor, int clients, int keys) {

		Row withInstructions(double command, double server) {
			return new Row(this.name, this.role, this.sentAs, this.requestsPerSecond, this.serverMicros, this.cpuMicros,
					this.inside, command, server, this.overFloor, this.instructionsOverFloor, this.clients, this.keys);
		}

		Row withRatios(double time, double count) {
			return new Row(this.name, this.role, this.sentAs, this.requestsPerSecond, this.serverMicros, this.cpuMicros,
					this.inside, this.instructions, this.serverInstructions, time, count, this.clients, this.keys);
		}

	}

	/**
	 * A goal checked against one run.
	 * @param met whether every row concerned meets it
	 * @param measured the figures, for the goals table
	 */
	record Verdict(boolean met, String measured) {
	}

	/**
	 * How the run is set up.
	 * @param requests measured calls per case and round
	 * @param warmupRequests calls before the measured ones, not counted
	 * @param rounds how many times every case runs, one after the other; each reports its best round
	 * @param clients {@code redis-benchmark}'s connections
	 * @param keys distinct keys, drawn at random per call
	 * @param instructionRequests measured calls per case under callgrind; 0 to count no instructions
	 * @param algorithm the algorithm of our policy: the token bucket (the goal's), or another to compare
	 */
	record Settings(int requests, int warmupRequests, int rounds, int clients, int keys, int instructionRequests,
			Algorithm algorithm) {

		static Settings from(Options options) {
			boolean instructions = Boolean.parseBoolean(options.string("instructions", "false"));
			return new Settings(options.integer("requests", 200_000), options.integer("warmup-requests", 20_000),
					options.integer("rounds", 2), options.integer("clients", 50), options.integer("keys", 10_000),
					instructions ? options.integer("instruction-requests", 20_000) : 0,
					Algorithm.valueOf(options.string("algorithm", "TOKEN_BUCKET").toUpperCase(Locale.ROOT)));
		}

	}

	public static void main(String[] args) throws Exception {
		Options options = Options.parse(args);
		List<Row> rows = run(options);
		System.out.println();
		System.out.println(table(rows));
		if (Settings.from(options).algorithm() != Algorithm.TOKEN_BUCKET) {
			// The goal is the token bucket's: another algorithm's rows are for comparison.
			return;
		}
		Verdict verdict = oursWithinFloor(rows);
		System.out.printf(Locale.ROOT, "Ours within %.1f× of the minimal script: %s (%s)%n", GOAL_WITHIN_FLOOR,
				verdict.met() ? "yes" : "no", verdict.measured());
	}

	/**
	 * Runs every case and returns one row per case.
	 * @param options {@code requests}, {@code warmup-requests}, {@code rounds}, {@code clients}, {@code keys},
	 * {@code instructions} ({@code true} to count instructions as well, under callgrind),
	 * {@code instruction-requests}, {@code algorithm}
	 * @return the rows, in the order of {@link #cases}
	 * @throws Exception if a server or {@code redis-benchmark} cannot run, or a case fails
	 */
	static List<Row> run(Options options) throws Exception {
		Settings settings = Settings.from(options);
		Path benchmark = RedisServerProcess.executable("redis-benchmark", "benchmark.redis-benchmark",
				"it comes with Redis (package redis-tools or redis); install it");
		List<Case> cases;
		Map<Case, Row> best = new LinkedHashMap<>();
		try (RedisServerProcess server = RedisServerProcess.start()) {
			System.out.printf(Locale.ROOT,
					"redis-server %s on port %d; %s, %d clients, %,d keys, %,d + %,d requests per case, %d round(s)%n",
					server.version(), server.port(), benchmark, settings.clients(), settings.keys(),
					settings.warmupRequests(), settings.requests(), settings.rounds());
			List<String> production = ProductionCommand.capture(server, settings.algorithm(), "rl:{capture}");
			cases = cases(settings.algorithm(), arguments(production));
			requireProductionCase(cases, production);
			load(server, cases);
			for (int round = 1; round <= settings.rounds(); round++) {
				for (Case c : cases) {
					Row row = measure(server, benchmark, settings, c, settings.requests(), settings.warmupRequests(),
							null);
					System.out.printf(Locale.ROOT, "round %d  %-40s %-7s %9.0f requests/s  %6.2f server µs/call"
							+ "  %6.2f server CPU µs/call  %s%n", round, row.name(), row.sentAs(),
							row.requestsPerSecond(), row.serverMicros(), row.cpuMicros(), row.inside());
					best.merge(c, row, (a, b) -> (b.serverMicros() < a.serverMicros()) ? b : a);
				}
			}
		}
		if (settings.instructionRequests() > 0) {
			countInstructions(benchmark, settings, cases, best);
		}
		List<Row> rows = new ArrayList<>();
		for (Row row : best.values()) {
			rows.add(row.withRatios(overFloor(best.values(), row, Row::serverMicros),
					overFloor(best.values(), row, Row::instructions)));
		}
		return rows;
	}

	/**
	 * Runs every case once more on a server under callgrind (whose times mean
	 * nothing, valgrind being many times slower) for its instructions per call.
	 */
	private static void countInstructions(Path benchmark, Settings settings, List<Case> cases, Map<Case, Row> rows)
			throws IOException, InterruptedException {
		try (Callgrind callgrind = Callgrind.prepare();
				RedisServerProcess server = RedisServerProcess.start(callgrind.wrapper())) {
			System.out.printf(Locale.ROOT, "Counting instructions: redis-server under callgrind on port %d, "
					+ "%,d + %,d requests per case%n", server.port(), settings.instructionRequests() / 10,
					settings.instructionRequests());
			load(server, cases);
			for (Case c : cases) {
				Row counted = measure(server, benchmark, settings, c, settings.instructionRequests(),
						settings.instructionRequests() / 10, callgrind);
				System.out.printf(Locale.ROOT, "callgrind  %-40s %-7s %,9.0f instructions/call in %s, %,9.0f in the "
						+ "whole server%n", counted.name(), counted.sentAs(), counted.instructions(), c.serverFunction(),
						counted.serverInstructions());
				rows.computeIfPresent(c, (k, row) -> row.withInstructions(counted.instructions(),
						counted.serverInstructions()));
			}
		}
	}

	/** A row's figure over the minimal script's sent the same way; NaN for INCR or without that figure. */
	private static double overFloor(Collection<Row> rows, Row row, ToDoubleFunction<Row> figure) {
		if (row.role() == Role.INCR) {
			return Double.NaN;
		}
		return rows.stream()
			.filter((r) -> r.role() == Role.FLOOR && r.sentAs().equals(row.sentAs()))
			.findFirst()
			.map((floor) -> figure.applyAsDouble(row) / figure.applyAsDouble(floor))
			.orElse(Double.NaN);
	}

	/**
	 * The goal of the issue: our server time per decision, sent as production
	 * sends it, within {@value #GOAL_WITHIN_FLOOR}× of the minimal script's sent
	 * the same way. The fallback (EVALSHA) and the instruction ratios, when
	 * counted, are shown beside it but decide nothing.
	 * @param rows the rows of one run
	 * @return whether met, and the ratios
	 */
	static Verdict oursWithinFloor(List<Row> rows) {
		StringJoiner measured = new StringJoiner("; ");
		boolean met = false;
		boolean all = true;
		for (Row row : rows) {
			if ((row.role() == Role.OURS || row.role() == Role.FALLBACK) && !Double.isNaN(row.overFloor())) {
				if (row.role() == Role.OURS) {
					met = true;
					all &= row.overFloor() <= GOAL_WITHIN_FLOOR;
				}
				String counted = Double.isNaN(row.instructionsOverFloor()) ? ""
						: String.format(Locale.ROOT, ", %.2f× in instructions", row.instructionsOverFloor());
				measured.add(String.format(Locale.ROOT, "%s%s %.2f× (%.2f µs%s)", row.sentAs(),
						(row.role() == Role.FALLBACK) ? " (fallback, not the goal)" : "", row.overFloor(),
						row.serverMicros(), counted));
			}
		}
		return new Verdict(met && all, measured.toString());
	}

	/**
	 * The rows as a Markdown table; with instruction columns when they were counted.
	 * @param rows the rows of one run
	 * @return the table
	 */
	static String table(List<Row> rows) {
		boolean counted = rows.stream().anyMatch((row) -> !Double.isNaN(row.instructions()));
		StringBuilder table = new StringBuilder();
		table.append(String.format(Locale.ROOT, "| Case (redis-benchmark, %d clients, %,d keys) | Sent as | Requests/s "
				+ "| Server µs/call | × minimal script | Server CPU µs/call |%s Commands run inside, per call |%n",
				rows.isEmpty() ? 0 : rows.get(0).clients(), rows.isEmpty() ? 0 : rows.get(0).keys(),
				counted ? " Instructions/call (command) | × minimal script | Instructions/call (server) |" : ""));
		table.append("|---|---|---:|---:|---:|---:|").append(counted ? "---:|---:|---:|" : "").append("---|\n");
		for (Row row : rows) {
			StringJoiner inside = new StringJoiner(", ");
			row.inside().forEach((command, n) -> inside
				.add(String.format(Locale.ROOT, "%s %.2f", command.toUpperCase(Locale.ROOT), n)));
			String instructions = counted ? String.format(Locale.ROOT, " %,.0f | %s | %,.0f |", row.instructions(),
					times(row.instructionsOverFloor()), row.serverInstructions()) : "";
			table.append(String.format(Locale.ROOT, "| %s | %s | %,.0f | %.2f | %s | %.2f |%s %s |%n", row.name(),
					row.sentAs(), row.requestsPerSecond(), row.serverMicros(), times(row.overFloor()), row.cpuMicros(),
					instructions, (inside.length() == 0) ? "–" : inside.toString()));
		}
		return table.toString();
	}

	private static String times(double ratio) {
		return Double.isNaN(ratio) ? "–" : String.format(Locale.ROOT, "%.2f×", ratio);
	}

	/** What the backend sends after its one key: {@code EVALSHA|FCALL <sha|name> 1 <key> <arguments>}. */
	private static List<String> arguments(List<String> production) {
		if (production.size() < 4 || !production.get(2).equals("1")) {
			throw new IllegalStateException("Expected a script call on one key from the backend, got " + production);
		}
		return production.subList(4, production.size());
	}

	/** Fails unless some case sends exactly what the backend sends: the same command, script and arguments. */
	private static void requireProductionCase(List<Case> cases, List<String> production) {
		String key = production.get(3);
		for (Case c : cases) {
			List<String> command = c.command(key);
			if (command.get(0).equalsIgnoreCase(production.get(0)) && command.subList(1, command.size())
				.equals(production.subList(1, production.size()))) {
				return;
			}
		}
		throw new IllegalStateException("RedisRateLimitBackend sends " + production
				+ ", which no case sends exactly: update LuaDecision.ours or BenchmarkLua");
	}

	/**
	 * Loads every script and library, and decides once with each case on a
	 * fresh key: admitted, and the same verdict and remaining tokens whether
	 * sent as EVALSHA or FCALL.
	 */
	private static void load(RedisServerProcess server, List<Case> cases) {
		Map<LuaDecision, List<?>> first = new LinkedHashMap<>();
		int fresh = 0;
		for (Case c : cases) {
			if (c.decision() == null) {
				continue;
			}
			// A key of its own per case: the scripts keep different types under their keys.
			String key = "rl:{check-" + (fresh++) + "}";
			LuaDecision decision = c.decision();
			if (c.send() == Send.EVALSHA) {
				Object sha = server.reply("SCRIPT", "LOAD", decision.script());
				if (!decision.sha1().equals(sha)) {
					throw new IllegalStateException("SCRIPT LOAD answered " + sha + ", not " + decision.sha1());
				}
			}
			else {
				server.reply("FUNCTION", "LOAD", "REPLACE", decision.library());
			}
			Object reply = server.reply(c.command(key).toArray(String[]::new));
			if (!(reply instanceof List<?> values) || values.size() < 2 || !Long.valueOf(1).equals(values.get(0))) {
				throw new IllegalStateException(c.name() + " as " + c.sentAs() + " did not admit a fresh key: " + reply);
			}
			List<?> verdict = values.subList(0, 2);
			List<?> before = first.putIfAbsent(decision, verdict);
			if (before != null && !before.equals(verdict)) {
				throw new IllegalStateException(c.name() + " decides " + verdict + " as " + c.sentAs() + " but "
						+ before + " the other way");
			}
		}
	}

	/**
	 * Flushes, warms up, resets the statistics (and the instruction count),
	 * runs the measured calls and reads what they cost.
	 */
	private static Row measure(RedisServerProcess server, Path benchmark, Settings settings, Case c, int requests,
			int warmup, Callgrind callgrind) throws IOException, InterruptedException {
		server.call("FLUSHALL");
		redisBenchmark(benchmark, server, settings, warmup, c);
		if (callgrind != null) {
			callgrind.zero(server);
		}
		server.call("CONFIG", "RESETSTAT");
		double cpuBefore = server.cpuSeconds();
		double requestsPerSecond = redisBenchmark(benchmark, server, settings, requests, c);
		double cpu = server.cpuSeconds() - cpuBefore;
		Callgrind.Counts counts = (callgrind != null) ? callgrind.dump(server) : null;
		Map<String, Stat> stats = commandStats(server.call("INFO", "commandstats"));
		Stat top = stats.get(c.statName());
		if (top == null || top.calls() != requests || top.failed() > 0) {
			throw new IllegalStateException(c.name() + " as " + c.sentAs() + ": expected " + requests + " calls of "
					+ c.statName() + " without failures, INFO commandstats says " + stats);
		}
		Map<String, Double> inside = new LinkedHashMap<>();
		stats.forEach((command, stat) -> {
			if (!command.equals(c.statName())) {
				inside.put(command, stat.calls() / (double) top.calls());
			}
		});
		double instructions = (counts != null) ? counts.inclusive(c.serverFunction()) / (double) top.calls()
				: Double.NaN;
		double serverInstructions = (counts != null) ? counts.total() / (double) top.calls() : Double.NaN;
		return new Row(c.name(), c.role(), c.sentAs(), requestsPerSecond, top.micros() / (double) top.calls(),
				cpu * 1e6 / top.calls(), inside, instructions, serverInstructions, Double.NaN, Double.NaN,
				settings.clients(), settings.keys());
	}

	/** Runs {@code redis-benchmark} for one case and returns the requests per second it reports. */
	private static double redisBenchmark(Path binary, RedisServerProcess server, Settings settings, int requests,
			Case c) throws IOException, InterruptedException {
		List<String> command = new ArrayList<>(List.of(binary.toString(), "-h", "127.0.0.1", "-p",
				Integer.toString(server.port()), "-c", Integer.toString(settings.clients()), "-n",
				Integer.toString(requests), "-r", Integer.toString(settings.keys()), "--csv"));
		command.addAll(c.command(KEY));
		// Output to a file and a deadline: redis-benchmark retries a server that went away for ever.
		Path log = Files.createTempFile("redis-benchmark-", ".log");
		Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
		int exit;
		try {
			if (!process.waitFor(REDIS_BENCHMARK_DEADLINE.toSeconds(), TimeUnit.SECONDS)) {
				throw new IllegalStateException("redis-benchmark did not finish within " + REDIS_BENCHMARK_DEADLINE
						+ " for " + c.name() + " as " + c.sentAs() + "; is the server still up?");
			}
			exit = process.exitValue();
		}
		finally {
			process.destroyForcibly();
		}
		String output = Files.readString(log, StandardCharsets.UTF_8);
		Files.deleteIfExists(log);
		// --csv: a header line, then "<command>","<rps>",<latencies>...
		String[] lines = output.strip().split("\n");
		String last = lines[lines.length - 1];
		if (exit != 0 || !last.startsWith("\"") || last.startsWith("\"test\"")) {
			throw new IllegalStateException("redis-benchmark failed (exit " + exit + ") for " + c.name() + " as "
					+ c.sentAs() + ": " + output);
		}
		String[] fields = last.split("\",\"");
		return Double.parseDouble(fields[1].replace("\"", ""));
	}

	/** A command's line in {@code INFO commandstats}. */
	private record Stat(long calls, long micros, long failed) {
	}

	/**
	 * Per command, calls, server µs and failures since the reset, leaving out
	 * what {@code redis-benchmark} and this program send to set up and read.
	 */
	private static Map<String, Stat> commandStats(String info) {
		Map<String, Stat> stats = new LinkedHashMap<>();
		for (String line : info.split("\r\n")) {
			if (!line.startsWith("cmdstat_")) {
				continue;
			}
			String command = line.substring("cmdstat_".length(), line.indexOf(':'));
			if (command.equals("info") || command.startsWith("config")) {
				continue;
			}
			long calls = 0;
			long micros = 0;
			long failed = 0;
			for (String field : line.substring(line.indexOf(':') + 1).split(",")) {
				String value = field.substring(field.indexOf('=') + 1);
				if (field.startsWith("calls=")) {
					calls = Long.parseLong(value);
				}
				else if (field.startsWith("usec=")) {
					micros = Long.parseLong(value);
				}
				else if (field.startsWith("failed_calls=") || field.startsWith("rejected_calls=")) {
					failed += Long.parseLong(value);
				}
			}
			stats.put(command, new Stat(calls, micros, failed));
		}
		return stats;
	}

}
