package dev.ratelimit.redis;

import org.springframework.data.redis.connection.RedisConnectionFactory;

import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.TimeSource;

/**
 * The Redis backend deciding with the scripts the starter runs in production,
 * with the time passed to them by a clock the test moves instead of the
 * server's {@code TIME}: a gateway test on Redis can then show when a key is
 * admitted again, to the microsecond.
 */
public final class ClockedRedisBackend {

	private ClockedRedisBackend() {
	}

	/**
	 * Creates the backend.
	 * @param connectionFactory the connection to the test's redis-server
	 * @param clock the clock whose time the scripts decide at
	 * @return the backend
	 */
	public static RateLimitBackend create(RedisConnectionFactory connectionFactory, TimeSource clock) {
		return new RedisRateLimitBackend(connectionFactory, clock);
	}

}
