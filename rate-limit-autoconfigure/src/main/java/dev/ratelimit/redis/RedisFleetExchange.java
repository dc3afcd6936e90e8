package dev.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

import org.springframework.data.redis.core.StringRedisTemplate;

import dev.ratelimit.insight.FleetExchange;

/**
 * A {@link FleetExchange} in Redis: one hash per topic and limit,
 * {@code prefix:{%fleet}:topic:limit}, with a field per instance whose value
 * is the time it was published (epoch milliseconds), a newline and the text.
 * A publish refreshes the hash's TTL; a reader leaves out (and removes) the
 * texts older than the exchange keeps, those of instances that stopped. No
 * storage key of a limit takes this form ({@code %} starts no limit's hash tag).
 * <p>
 * It runs on the limiter's connection: a failure met while Redis is silent or
 * while the connection follows a failover is thrown as that outage, told of
 * once by the connection (see {@link AnnouncedRedisFailure}).
 */
public final class RedisFleetExchange implements FleetExchange {

	private final StringRedisTemplate redis;

	private final RedisLimiterConnection connection;

	private final String prefix;

	private final String instance;

	private final Duration keep;

	private final LongSupplier millisClock;

	/**
	 * Creates the exchange.
	 * @param connection the limiter's connection
	 * @param keyPrefix the prefix of the limiter's keys
	 * @param instance this instance's id, unique in the fleet
	 * @param keep how long a text counts after it was published
	 * @param millisClock the time, epoch milliseconds
	 */
	public RedisFleetExchange(RedisLimiterConnection connection, String keyPrefix, String instance,
			Duration keep, LongSupplier millisClock) {
		this.redis = new StringRedisTemplate(connection.connectionFactory());
		this.connection = connection;
		this.prefix = keyPrefix + ":{%fleet}:";
		this.instance = instance;
		this.keep = keep;
		this.millisClock = millisClock;
	}

	@Override
	public void publish(String topic, String limit, String text) {
		String hash = hash(topic, limit);
		try {
			this.redis.opsForHash().put(hash, this.instance, this.millisClock.getAsLong() + "\n" + text);
			this.redis.expire(hash, this.keep);
		}
		catch (RuntimeException ex) {
			throw this.connection.told(ex);
		}
	}

	@Override
	public List<String> others(String topic, String limit) {
		String hash = hash(topic, limit);
		Map<Object, Object> entries;
		try {
			entries = this.redis.opsForHash().entries(hash);
		}
		catch (RuntimeException ex) {
			throw this.connection.told(ex);
		}
		long now = this.millisClock.getAsLong();
		List<String> texts = new ArrayList<>();
		List<Object> stale = new ArrayList<>();
		entries.forEach((field, value) -> {
			if (this.instance.equals(field)) {
				return;
			}
			String entry = String.valueOf(value);
			int newline = entry.indexOf('\n');
			long published = (newline > 0) ? parse(entry.substring(0, newline)) : -1;
			if (published < 0 || now - published > this.keep.toMillis()) {
				stale.add(field);
			}
			else {
				texts.add(entry.substring(newline + 1));
			}
		});
		if (!stale.isEmpty()) {
			this.redis.opsForHash().delete(hash, stale.toArray());
		}
		return texts;
	}

	private static long parse(String millis) {
		try {
			return Long.parseLong(millis);
		}
		catch (NumberFormatException ex) {
			return -1;
		}
	}

	private String hash(String topic, String limit) {
		return this.prefix + topic + ':' + limit;
	}

}
