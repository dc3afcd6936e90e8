package dev.ratelimit.redis;

/**
 * The benchmarks' window on this package's package-private {@link LuaScripts}:
 * the token-bucket decision exactly as {@link RedisRateLimitBackend} sends it,
 * as the production function library and its {@code decide_token_bucket} function
 * ({@code FCALL}, the limiter's connection) and as the script text sent where
 * Redis refuses functions ({@code EVALSHA}). Lives in the benchmarks module
 * only; nothing in production uses it.
 */
public final class BenchmarkLua {

	private BenchmarkLua() {
	}

	/**
	 * Returns the script the backend sends as {@code EVALSHA} for a decision on
	 * one token bucket.
	 * @return the script text
	 */
	public static String tokenBucketScript() {
		return LuaScripts.decideTokenBucket().eval().getScriptAsString();
	}

	/**
	 * Returns the function library the limiter's connection loads.
	 * @return the {@code #!lua} text
	 */
	public static String library() {
		return LuaScripts.library();
	}

	/**
	 * Returns the library's function that decides one token bucket, the one a
	 * decision on one token bucket calls.
	 * @return the function's name
	 */
	public static String decideFunction() {
		return LuaScripts.decideTokenBucket().function();
	}

}
