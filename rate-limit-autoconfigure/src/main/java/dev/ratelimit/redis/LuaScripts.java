package dev.ratelimit.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.DefaultRedisScript;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Loads the Lua scripts shipped in {@code META-INF/scripts}.
 */
final class LuaScripts {

	private static final String LOCATION = "META-INF/scripts/";

	private LuaScripts() {
	}

	/**
	 * Reads a script once into a {@link RedisScript} that Spring Data Redis runs
	 * with {@code EVALSHA}, falling back to {@code EVAL} when the server does not
	 * know it yet.
	 * @param <T> the result type
	 * @param name the file name, for example {@code token_bucket.lua}
	 * @param resultType the result type
	 * @return the script
	 */
	static <T> RedisScript<T> load(String name, Class<T> resultType) {
		// Text rather than a resource-backed script: a resource is checked for
		// modification (a file or jar look-up under a lock) on every execution.
		ClassPathResource resource = new ClassPathResource(LOCATION + name, LuaScripts.class.getClassLoader());
		try (InputStream in = resource.getInputStream()) {
			return new DefaultRedisScript<>(new String(in.readAllBytes(), StandardCharsets.UTF_8), resultType);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read the Lua script " + resource, ex);
		}
	}

}
