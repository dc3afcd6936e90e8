package dev.ratelimit.redis;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.ratelimit.core.Quota;
import dev.ratelimit.live.OverrideStore;
import dev.ratelimit.live.QuotaText;

/**
 * Overrides shared by every instance of a Redis: one hash,
 * {@code prefix:{%overrides}}, with a field {@code limit:target} per override
 * (the target empty for the limit itself) whose value is the quota as
 * {@link QuotaText} writes it ({@code capacity=50;refill=10/1s}), and a
 * version counter, {@code prefix:{%overrides}:version}, raised by every change
 * in the same script. No storage key of a limit takes this form (a limit's
 * name is never empty). Both keys share a hash tag, so a Cluster keeps them in
 * one slot. They have no TTL: an override lasts until it is removed.
 * <p>
 * A field or value that does not read (written by hand) is logged and left
 * out of {@link #load()}. On the limiter's connection, a failure met while
 * Redis is silent or while the connection follows a failover is thrown as that
 * outage, told of once by the connection (see {@link AnnouncedRedisFailure}).
 */
public final class RedisOverrideStore implements OverrideStore {

	private static final Log logger = LogFactory.getLog(RedisOverrideStore.class);

	private static final LimiterScript<Long> PUT = LuaScripts.overridePut();

	private static final LimiterScript<Long> REMOVE = LuaScripts.overrideRemove();

	private final StringRedisTemplate redis;

	private final ScriptRunner scripts;

	/** A read's failure as it is to be thrown: the outage told of already, when it is one. */
	private final UnaryOperator<RuntimeException> told;

	private final String hash;

	private final String version;

	/**
	 * Creates the store.
	 * @param connectionFactory the limiter's connection factory
	 * @param keyPrefix the prefix of the limiter's keys
	 */
	public RedisOverrideStore(RedisConnectionFactory connectionFactory, String keyPrefix) {
		this(connectionFactory, new ScriptRunner(connectionFactory), keyPrefix, UnaryOperator.identity());
	}

	/**
	 * Creates the store on the limiter's connection.
	 * @param connection the limiter's connection
	 * @param keyPrefix the prefix of the limiter's keys
	 */
	public RedisOverrideStore(RedisLimiterConnection connection, String keyPrefix) {
		this(connection.connectionFactory(), new ScriptRunner(connection), keyPrefix, connection::told);
	}

	private RedisOverrideStore(RedisConnectionFactory connectionFactory, ScriptRunner scripts, String keyPrefix,
			UnaryOperator<RuntimeException> told) {
		this.redis = new StringRedisTemplate(connectionFactory);
		this.scripts = scripts;
		this.told = told;
		this.hash = keyPrefix + ":{%overrides}";
		this.version = this.hash + ":version";
	}

	@Override
	public long version() {
		String value;
		try {
			value = this.redis.opsForValue().get(this.version);
		}
		catch (RuntimeException ex) {
			throw this.told.apply(ex);
		}
		return (value != null) ? Long.parseLong(value) : 0;
	}

	@Override
	public Map<String, Map<String, Quota>> load() {
		Map<String, Map<String, Quota>> overrides = new LinkedHashMap<>();
		Map<Object, Object> entries;
		try {
			entries = this.redis.opsForHash().entries(this.hash);
		}
		catch (RuntimeException ex) {
			throw this.told.apply(ex);
		}
		entries.forEach((field, value) -> {
			String name = String.valueOf(field);
			int colon = name.indexOf(':');
			if (colon <= 0) {
				logger.warn("Ignoring the override field '" + name + "' of " + this.hash
						+ ": expected limit:plan, or limit: for the limit itself");
				return;
			}
			try {
				Quota quota = QuotaText.parse(String.valueOf(value));
				overrides.computeIfAbsent(name.substring(0, colon), (limit) -> new LinkedHashMap<>())
					.put(name.substring(colon + 1), quota);
			}
			catch (RuntimeException ex) {
				logger.warn("Ignoring the override '" + name + "' = '" + value + "' of " + this.hash + ": "
						+ ex.getMessage());
			}
		});
		return overrides;
	}

	@Override
	public void put(String limit, String target, Quota quota) {
		this.scripts.run(PUT, List.of(this.hash, this.version), List.of(limit + ":" + target, QuotaText.format(quota)));
	}

	@Override
	public void remove(String limit, String target) {
		this.scripts.run(REMOVE, List.of(this.hash, this.version), List.of(limit + ":" + target));
	}

	@Override
	public boolean isShared() {
		return true;
	}

}
