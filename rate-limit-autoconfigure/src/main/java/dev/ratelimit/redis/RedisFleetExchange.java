package dev.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.ratelimit.insight.FleetExchange;

/**
 * A {@link FleetExchange} in Redis: one hash per topic and limit,
 * {@code prefix:{%fleet}:topic:limit}, with a field per instance whose value
 * is the time it was published (epoch milliseconds), a newline and the text.
 * A publish refreshes the hash's TTL; a reader leaves out (and removes) the
 * texts older than the exchange keeps, those of instances that stopped. No
 * storage key of a limit takes this form ({@code %} starts no limit's hash tag).
 */
public final class RedisFleetExchange implements FleetExchange {

	private final StringRedisTemplate redis;

	private final String prefix;

	private final String instance;

	private final Duration keep;

	private final LongSupplier millisClock;

	/**
	 * Creates the exchange.
	 * @param connectionFactory the limiter's connection factory
	 * @param keyPrefix the prefix of the limiter's keys
	 * @param instance this instance's id, unique in the fleet
	 * @param keep how long a text counts after it was published
	 * @param millisClock the time, epoch milliseconds
	 */
	public RedisFleetExchange(RedisConnectionFactory connectionFactory, String keyPrefix, String instance,
			Duration keep, LongSupplier millisClock) {
		this.redis = new StringRedisTemplate(connectionFactory);
		this.prefix = keyPrefix + ":{%fleet}:";
		this.instance = instance;
		this.keep = keep;
		this.millisClock = millisClock;
	}

	@Override
	public void publish(String topic, String limit, String text) {
		String hash = hash(topic, limit);
		this.redis.opsForHash().put(hash, this.instance, this.millisClock.getAsLong() + "\n" + text);
		this.redis.expire(hash, this.keep);
	}

	@Override
	public List<String> others(String topic, String limit) {
		String hash = hash(topic, limit);
		Map<Object, Object> entries = this.redis.opsForHash().entries(hash);
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
