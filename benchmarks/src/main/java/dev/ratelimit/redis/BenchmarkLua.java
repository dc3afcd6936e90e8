package dev.ratelimit.redis;

import java.util.List;

import dev.ratelimit.core.Algorithm;

/**
 * The benchmarks' window on this package's package-private {@link LuaScripts}:
 * a decision on one key exactly as {@link RedisRateLimitBackend} sends it,
 * as the production function library and its function ({@code FCALL}, the
 * limiter's connection; {@code decide_token_bucket} for a token bucket,
 * {@code decide} for the other algorithms) and as the script text sent where
 * Redis refuses functions ({@code EVALSHA}). Lives in the benchmarks module
 * only; nothing in production uses it.
 */
public final class BenchmarkLua {

	private BenchmarkLua() {
	}

	/**
	 * Returns the script the backend sends as {@code EVALSHA} for a decision on
	 * one key of a policy with the given algorithm.
	 * @param algorithm the policy's algorithm
	 * @return the script text
	 */
	public static String script(Algorithm algorithm) {
		return decision(algorithm).eval().getScriptAsString();
	}

	/**
	 * Returns the function library the limiter's connection loads.
	 * @return the {@code #!lua} text
	 */
	public static String library() {
		return LuaScripts.library();
	}

	/**
	 * Returns the library's function a decision on one key of a policy with the
	 * given algorithm calls.
	 * @param algorithm the policy's algorithm
	 * @return the function's name
	 */
	public static String decideFunction(Algorithm algorithm) {
		return decision(algorithm).function();
	}

	private static LimiterScript<List<Object>> decision(Algorithm algorithm) {
		return (algorithm == Algorithm.TOKEN_BUCKET) ? LuaScripts.decideTokenBucket() : LuaScripts.decide(algorithm);
	}

}
