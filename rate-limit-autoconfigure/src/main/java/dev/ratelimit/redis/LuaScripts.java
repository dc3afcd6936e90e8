package dev.ratelimit.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.DefaultRedisScript;
import org.springframework.data.redis.core.script.RedisScript;

import dev.ratelimit.core.Algorithm;

/**
 * Composes the Lua scripts shipped in {@code META-INF/scripts}: the shared
 * {@code lib.lua}, one file per algorithm, then a driver (budgets need only
 * {@code lib.lua} and {@code budget.lua}, concurrency caps {@code lib.lua} and
 * {@code semaphore.lua}). Each composed script
 * is one text, loaded once by the server, so a decision stays one
 * {@code EVALSHA} however many policies and algorithms it involves.
 */
final class LuaScripts {

	private static final String LOCATION = "META-INF/scripts/";

	/** The algorithms, each registering itself with {@code lib.lua}'s table. */
	private static final List<String> ALGORITHMS = List.of("token_bucket.lua", "leaky_bucket.lua",
			"leaky_bucket_shaping.lua", "fixed_window.lua", "sliding_window_log.lua", "sliding_window_counter.lua");

	private LuaScripts() {
	}

	/**
	 * Returns the script that decides several policies all or nothing, see
	 * {@code decide.lua}.
	 * @return the script
	 */
	static RedisScript<List<Object>> decide() {
		return compose("decide.lua");
	}

	/**
	 * Returns the decide script with one algorithm only. Redis runs a script's
	 * whole text on every call, defining every function in it, so a script with
	 * only the algorithm in use costs the server less per decision.
	 * @param algorithm the file of the algorithm, for example {@code token_bucket.lua}
	 * @return the script
	 */
	@SuppressWarnings({ "rawtypes", "unchecked" })
	static RedisScript<List<Object>> decide(String algorithm) {
		String text = read("lib.lua") + '\n' + read(algorithm) + '\n' + read("decide.lua");
		return (RedisScript) new DefaultRedisScript<>(text, List.class);
	}

	/**
	 * Returns the decide script with one algorithm only, see {@link #decide(String)}.
	 * @param algorithm the algorithm
	 * @return the script
	 */
	static RedisScript<List<Object>> decide(Algorithm algorithm) {
		return decide(algorithm.name().toLowerCase(Locale.ROOT) + ".lua");
	}

	/**
	 * Returns every script the Redis backend, budget store and permit store run,
	 * for loading them into the server's script cache ahead of the first call.
	 * @return the scripts
	 */
	static List<RedisScript<List<Object>>> all() {
		List<RedisScript<List<Object>>> scripts = new ArrayList<>(List.of(decide(), refund(), budget(), semaphore()));
		for (Algorithm algorithm : Algorithm.values()) {
			scripts.add(decide(algorithm));
		}
		return scripts;
	}

	/**
	 * Returns the script that gives back what {@link #decide()} took, see
	 * {@code refund.lua}.
	 * @return the script
	 */
	static RedisScript<List<Object>> refund() {
		return compose("refund.lua");
	}

	/**
	 * Returns the script that reserves, settles, releases or reads a cost budget,
	 * see {@code budget.lua}. It needs only {@code lib.lua}, none of the rate
	 * limit algorithms.
	 * @return the script
	 */
	@SuppressWarnings({ "rawtypes", "unchecked" })
	static RedisScript<List<Object>> budget() {
		String text = read("lib.lua") + '\n' + read("budget.lua");
		return (RedisScript) new DefaultRedisScript<>(text, List.class);
	}

	/**
	 * Returns the lease semaphore of distributed concurrency caps: acquire,
	 * renew, release or count the permits of one key, see {@code semaphore.lua}.
	 * Like {@link #budget()} it needs only {@code lib.lua}.
	 * @return the script
	 */
	@SuppressWarnings({ "rawtypes", "unchecked" })
	static RedisScript<List<Object>> semaphore() {
		String text = read("lib.lua") + '\n' + read("semaphore.lua");
		return (RedisScript) new DefaultRedisScript<>(text, List.class);
	}

	@SuppressWarnings({ "rawtypes", "unchecked" })
	private static RedisScript<List<Object>> compose(String driver) {
		StringBuilder text = new StringBuilder(read("lib.lua"));
		for (String algorithm : ALGORITHMS) {
			text.append('\n').append(read(algorithm));
		}
		text.append('\n').append(read(driver));
		// Text rather than a resource-backed script: a resource is checked for
		// modification (a file or jar look-up under a lock) on every execution.
		return (RedisScript) new DefaultRedisScript<>(text.toString(), List.class);
	}

	private static String read(String name) {
		ClassPathResource resource = new ClassPathResource(LOCATION + name, LuaScripts.class.getClassLoader());
		try (InputStream in = resource.getInputStream()) {
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read the Lua script " + resource, ex);
		}
	}

}
