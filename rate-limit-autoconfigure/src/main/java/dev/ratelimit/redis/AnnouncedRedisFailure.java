package dev.ratelimit.redis;

import org.springframework.data.redis.RedisConnectionFailureException;

import dev.ratelimit.core.AnnouncedOutage;

/**
 * A limiter call that failed, or was refused unsent, while the limiter's
 * connection is in a state it has already told of with a warning of its own:
 * a failover it follows (see {@link RedisFailovers}), or a Redis that sends
 * nothing (see {@link RedisSilence}). The call follows its limit's failure mode
 * like any failed call; the logs name the cause once rather than every kind of
 * limit warning of it again.
 */
final class AnnouncedRedisFailure extends RedisConnectionFailureException implements AnnouncedOutage {

	private static final long serialVersionUID = 1L;

	AnnouncedRedisFailure(String message) {
		super(message);
	}

	AnnouncedRedisFailure(String message, Throwable cause) {
		super(message, cause);
	}

}
