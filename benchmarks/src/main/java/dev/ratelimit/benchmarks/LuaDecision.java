package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.redis.BenchmarkLua;

/**
 * One Lua decision as the Redis benchmarks send it, in both forms: the script
 * text for {@code EVALSHA} and a function library for {@code FCALL}, with the
 * arguments that follow its one key. The one place that says which texts and
 * which arguments are measured: the minimal GCRA script (the floor) and our
 * decision (a token bucket's, or another algorithm's when asked for).
 *
 * @param name what the tables call it
 * @param script the text {@code SCRIPT LOAD} and {@code EVALSHA} run
 * @param library the {@code #!lua} text {@code FUNCTION LOAD} loads
 * @param function the function of {@code library} that {@code FCALL} calls
 * @param arguments the arguments after the key ({@code ARGV})
 */
record LuaDecision(String name, String script, String library, String function, List<String> arguments) {

	/** How a decision reaches the server. */
	enum Send {

		EVALSHA, FCALL

	}

	/** Emission interval of the floor's policy, µs per token: 10^6 tokens a second, far above any rate here. */
	static final String FLOOR_INTERVAL_MICROS = "1";

	/** Burst of the floor's policy, the capacity of our benchmarks' token bucket. */
	static final String FLOOR_BURST = "1000000000";

	/**
	 * The floor: {@code minimal_gcra.lua}, the least an exact distributed
	 * decision can do in Lua ({@code TIME}, {@code GET}, {@code SET ... PX}),
	 * with a burst of 10^9 and one token per µs, so that nothing is denied (no
	 * key here sees 10^6 calls a second). As a library its text runs on every
	 * call, as the script's does: there is nothing to define once.
	 * @return the floor
	 */
	static LuaDecision minimalGcra() {
		String text = resource("minimal_gcra.lua");
		return new LuaDecision("minimal GCRA script", text, library("rlbench_floor", "rlbench_gcra", "", text),
				"rlbench_gcra", List.of(FLOOR_INTERVAL_MICROS, FLOOR_BURST));
	}

	/**
	 * Our decision on one key of a policy with the given algorithm, with the
	 * arguments the backend sends: as production's function library and the
	 * function the limiter's connection calls ({@code FCALL};
	 * {@code decide_token_bucket} for a token bucket, {@code decide} for the
	 * other algorithms), and as the script text {@code RedisRateLimitBackend}
	 * sends where Redis refuses functions ({@code EVALSHA}), both composed by
	 * {@code LuaScripts}.
	 * @param algorithm the policy's algorithm
	 * @param arguments the arguments the backend sends after the key, as
	 * {@link ProductionCommand} saw them
	 * @return our decision
	 */
	static LuaDecision ours(Algorithm algorithm, List<String> arguments) {
		return new LuaDecision("ours, " + algorithm.name().toLowerCase(Locale.ROOT).replace('_', ' '),
				BenchmarkLua.script(algorithm), BenchmarkLua.library(), BenchmarkLua.decideFunction(algorithm),
				arguments);
	}

	/**
	 * Makes a function library of a script written for {@code EVAL}: the
	 * definitions run once, when the library loads; the body, which reads
	 * {@code KEYS} and {@code ARGV} as a script does, runs on every call. Both
	 * are locals of the library that each call sets (a function gets them as
	 * parameters, and has no globals), so neither text needs a change.
	 */
	static String library(String libraryName, String function, String definitions, String body) {
		return "#!lua name=" + libraryName + "\nlocal KEYS, ARGV\n" + definitions + "\nlocal function " + function
				+ "(keys, args)\nKEYS, ARGV = keys, args\n" + body + "\nend\nredis.register_function('" + function
				+ "', " + function + ")\n";
	}

	/** The SHA-1 that {@code EVALSHA} names the script by. */
	String sha1() {
		try {
			byte[] digest = MessageDigest.getInstance("SHA-1").digest(this.script.getBytes(StandardCharsets.UTF_8));
			return HexFormat.of().formatHex(digest);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * The command deciding for one key, sent the given way.
	 * @param send EVALSHA or FCALL
	 * @param key the key
	 * @return the command and its arguments
	 */
	List<String> command(Send send, String key) {
		List<String> command = new ArrayList<>(4 + this.arguments.size());
		command.add(send.name());
		command.add((send == Send.EVALSHA) ? sha1() : this.function);
		command.add("1");
		command.add(key);
		command.addAll(this.arguments);
		return command;
	}

	private static String resource(String name) {
		try (InputStream in = LuaDecision.class.getResourceAsStream(name)) {
			if (in == null) {
				throw new IllegalStateException("No resource " + name + " next to " + LuaDecision.class.getName());
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
