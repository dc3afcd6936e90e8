package dev.ratelimit.redis;

import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reads how often a server ran a command, from {@code INFO commandstats}: the
 * proof that a decision is one round trip.
 */
final class CommandStats {

	private static final Pattern CALLS = Pattern.compile("(?:^|,)calls=(\\d+)");

	private CommandStats() {
	}

	/**
	 * Zeroes the server's statistics.
	 * @param connectionFactory a factory for one server (not a cluster)
	 */
	static void reset(RedisConnectionFactory connectionFactory) {
		new StringRedisTemplate(connectionFactory).execute((RedisCallback<Void>) (connection) -> {
			connection.serverCommands().resetConfigStats();
			return null;
		});
	}

	/**
	 * Returns how many times the server ran {@code command} since the last reset.
	 * @param connectionFactory a factory for one server (not a cluster)
	 * @param command the command in lower case, such as {@code evalsha}
	 * @return the number of calls
	 */
	static long calls(RedisConnectionFactory connectionFactory, String command) {
		Properties stats = new StringRedisTemplate(connectionFactory)
			.execute((RedisCallback<Properties>) (connection) -> connection.serverCommands().info("commandstats"));
		String line = stats.getProperty("cmdstat_" + command);
		if (line == null) {
			return 0;
		}
		Matcher matcher = CALLS.matcher(line);
		assertThat(matcher.find()).as("calls in %s", line).isTrue();
		return Long.parseLong(matcher.group(1));
	}

}
