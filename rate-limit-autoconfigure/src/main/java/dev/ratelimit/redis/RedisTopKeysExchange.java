package dev.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.ratelimit.core.LimitKind;
import dev.ratelimit.insight.HeavyHitters.Snapshot;
import dev.ratelimit.insight.SnapshotText;
import dev.ratelimit.insight.TopKeysExchange;

/**
 * Heavy hitters shared through Redis: one hash per limit,
 * {@code prefix:{%top}:kind:name}, with a field per instance whose value is
 * that instance's latest snapshot ({@link SnapshotText}). A publish refreshes
 * the hash's TTL; a reader leaves out (and removes) the snapshots older than
 * the exchange keeps, those of instances that stopped. No storage key of a
 * limit takes this form ({@code %} starts no limit's hash tag).
 */
public final class RedisTopKeysExchange implements TopKeysExchange {

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
	 * @param keep how long a snapshot counts after it was published
	 * @param millisClock the time, epoch milliseconds
	 */
	public RedisTopKeysExchange(RedisConnectionFactory connectionFactory, String keyPrefix, String instance,
			Duration keep, LongSupplier millisClock) {
		this.redis = new StringRedisTemplate(connectionFactory);
		this.prefix = keyPrefix + ":{%top}:";
		this.instance = instance;
		this.keep = keep;
		this.millisClock = millisClock;
	}

	@Override
	public void publish(LimitKind kind, String name, Snapshot snapshot) {
		String hash = hash(kind, name);
		this.redis.opsForHash().put(hash, this.instance, SnapshotText.write(snapshot, this.millisClock.getAsLong()));
		this.redis.expire(hash, this.keep);
	}

	@Override
	public List<Snapshot> others(LimitKind kind, String name) {
		String hash = hash(kind, name);
		Map<Object, Object> entries = this.redis.opsForHash().entries(hash);
		long now = this.millisClock.getAsLong();
		List<Snapshot> snapshots = new ArrayList<>();
		List<Object> stale = new ArrayList<>();
		entries.forEach((field, value) -> {
			if (this.instance.equals(field)) {
				return;
			}
			SnapshotText.Published published = SnapshotText.read(String.valueOf(value));
			if (published == null || now - published.takenAtMillis() > this.keep.toMillis()) {
				stale.add(field);
			}
			else {
				snapshots.add(published.snapshot());
			}
		});
		if (!stale.isEmpty()) {
			this.redis.opsForHash().delete(hash, stale.toArray());
		}
		return snapshots;
	}

	private String hash(LimitKind kind, String name) {
		return this.prefix + kind.label() + ':' + name;
	}

}
