package dev.ratelimit.redis;

import java.time.Duration;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The limiter's own connection to the application's Redis, with the limiter's
 * command timeout (see {@link LimiterConnectionFactories}). Deliberately not a
 * {@link RedisConnectionFactory} bean itself, so that it never competes with
 * the application's factory for injection. Closing it closes the connection if
 * it is the limiter's own.
 */
public final class RedisLimiterConnection implements AutoCloseable {

	private final RedisConnectionFactory application;

	private final RedisConnectionFactory limiter;

	/**
	 * Creates the limiter's connection to the same Redis as {@code application}.
	 * @param application the application's connection factory
	 * @param timeout the command timeout of limiter calls
	 */
	public RedisLimiterConnection(RedisConnectionFactory application, Duration timeout) {
		this.application = application;
		this.limiter = LimiterConnectionFactories.withCommandTimeout(application, timeout);
	}

	/**
	 * Returns the factory limiter calls use.
	 * @return the connection factory
	 */
	public RedisConnectionFactory connectionFactory() {
		return this.limiter;
	}

	@Override
	public void close() {
		if (this.limiter != this.application && this.limiter instanceof LettuceConnectionFactory own) {
			own.destroy();
		}
	}

}
