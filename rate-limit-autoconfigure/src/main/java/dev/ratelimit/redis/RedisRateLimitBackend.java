package dev.ratelimit.redis;

import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Refill;
import dev.ratelimit.core.TimeSource;

/**
 * Keeps token buckets in Redis, so that every application instance sharing the
 * server shares the limit. Each decision is one {@code EVALSHA} of
 * {@code META-INF/scripts/token_bucket.lua}, which reads, refills, takes and
 * writes the bucket atomically and sets its TTL; the arithmetic is the same as
 * {@link dev.ratelimit.core.TokenBucket}'s, so both backends decide alike.
 * <p>
 * By default the script reads the Redis server's {@code TIME}, the one clock
 * all instances agree on. Failures of Redis are thrown as Spring's
 * {@link org.springframework.dao.DataAccessException}s, unchanged, for the
 * caller to apply the policy's failure mode.
 */
public final class RedisRateLimitBackend implements RateLimitBackend {

	@SuppressWarnings({ "rawtypes", "unchecked" })
	private static final RedisScript<List<Long>> TOKEN_BUCKET = (RedisScript) LuaScripts.load("token_bucket.lua",
			List.class);

	private final StringRedisTemplate redis;

	private final @Nullable TimeSource explicitClock;

	/**
	 * Creates a backend that uses the Redis server's clock.
	 * @param connectionFactory the connection factory
	 */
	public RedisRateLimitBackend(RedisConnectionFactory connectionFactory) {
		this(connectionFactory, null);
	}

	/**
	 * Creates a backend.
	 * @param connectionFactory the connection factory
	 * @param explicitClock the clock whose time is passed to the script, or
	 * {@code null} to use the Redis server's {@code TIME}; only tests replaying a
	 * timeline should set it, since instances' clocks never agree exactly
	 */
	public RedisRateLimitBackend(RedisConnectionFactory connectionFactory, @Nullable TimeSource explicitClock) {
		// This constructor calls afterPropertiesSet(): the template is ready to use.
		this.redis = new StringRedisTemplate(connectionFactory);
		this.explicitClock = explicitClock;
	}

	@Override
	public Decision tryConsume(RateLimitPolicy policy, String key, long cost) {
		Refill refill = policy.refill();
		String capacity = Long.toString(policy.capacity());
		String tokens = Long.toString(refill.tokens());
		String period = Long.toString(refill.periodMicros());
		String amount = Long.toString(cost);
		List<Long> result = (this.explicitClock != null)
				? this.redis.execute(TOKEN_BUCKET, List.of(key), capacity, tokens, period, amount,
						Long.toString(this.explicitClock.currentTimeMicros()))
				: this.redis.execute(TOKEN_BUCKET, List.of(key), capacity, tokens, period, amount);
		return toDecision(result, policy.capacity());
	}

	private static Decision toDecision(@Nullable List<Long> result, long limit) {
		if (result == null || result.size() != 4) {
			throw new IllegalStateException("Unexpected reply from token_bucket.lua: " + result);
		}
		return new Decision(result.get(0) == 1L, result.get(1), limit, result.get(3), result.get(2));
	}

}
