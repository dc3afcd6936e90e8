package dev.ratelimit.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import dev.ratelimit.core.Algorithm;

/**
 * The benchmarks' window on this package's package-private {@link LuaScripts}:
 * the token-bucket decide script exactly as {@link RedisRateLimitBackend} sends
 * it, and the same text split where its definitions end. Lives in the
 * benchmarks module only; nothing in production uses it.
 */
public final class BenchmarkLua {

	private static final String LOCATION = "META-INF/scripts/";

	private BenchmarkLua() {
	}

	/**
	 * Returns the script the backend runs for a decision on token buckets alone.
	 * @return the script text
	 */
	public static String tokenBucketScript() {
		return LuaScripts.decide(Algorithm.TOKEN_BUCKET).getScriptAsString();
	}

	/**
	 * Returns {@link #tokenBucketScript()} in two parts: the definitions
	 * ({@code lib.lua} and {@code token_bucket.lua}) and the driver that decides
	 * ({@code decide.lua}), read from the same resources as {@link LuaScripts}.
	 * @return the definitions, then the driver
	 * @throws IllegalStateException if they no longer compose to the script the
	 * backend sends, so that a benchmark built on them measures something else
	 */
	public static List<String> tokenBucketDefinitionsAndDriver() {
		String definitions = read("lib.lua") + '\n' + read("token_bucket.lua");
		String driver = read("decide.lua");
		if (!(definitions + '\n' + driver).equals(tokenBucketScript())) {
			throw new IllegalStateException("LuaScripts no longer composes the token-bucket script as lib.lua, "
					+ "token_bucket.lua, decide.lua: update " + BenchmarkLua.class.getName());
		}
		return List.of(definitions, driver);
	}

	private static String read(String name) {
		try (InputStream in = BenchmarkLua.class.getClassLoader().getResourceAsStream(LOCATION + name)) {
			if (in == null) {
				throw new IllegalStateException("No Lua script " + LOCATION + name + " on the classpath");
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
