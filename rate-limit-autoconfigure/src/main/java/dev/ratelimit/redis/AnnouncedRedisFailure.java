package dev.ratelimit.redis;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.RedisConnectionFailureException;

import dev.ratelimit.core.AnnouncedOutage;
import dev.ratelimit.core.Causes;

/**
 * A limiter call that failed, or was refused unsent, while the limiter's
 * connection is in a state it has already told of with a warning of its own:
 * a failover it follows (see {@link RedisFailovers}), or a Redis that sends
 * nothing (see {@link RedisSilence}). The call follows its limit's failure mode
 * like any failed call; the logs name the cause once rather than every kind of
 * limit warning of it again.
 * <p>
 * {@link #told} is where every failure of a call on the limiter's connection
 * is told apart: the scripts' runner, the overrides' store and the fleet's
 * exchange throw what it returns, and whoever logs an {@link AnnouncedOutage}
 * logs it at debug level, so that an outage reads as the one warning of the
 * silence or the failover and the one line when decisions are back.
 */
final class AnnouncedRedisFailure extends RedisConnectionFailureException implements AnnouncedOutage {

	private static final long serialVersionUID = 1L;

	AnnouncedRedisFailure(String message) {
		super(message);
	}

	AnnouncedRedisFailure(String message, Throwable cause) {
		super(message, cause);
	}

	/**
	 * Returns a call's failure as the outage told of already, when one is: a
	 * failover or lost connection the connection follows (a call refused
	 * because the connection's channel had just closed tells of that loss
	 * first, see {@link RedisFailovers#duringFailover}), or a silent Redis (or
	 * Cluster node); otherwise the failure itself, which its caller warns of.
	 * @param failure the call's failure
	 * @param failovers the connection's failover follower, or {@code null} for none
	 * @param silence the connection's gate, or {@code null} for none
	 * @param sentIn the failover follower's {@link RedisFailovers#generation()}
	 * read before the call was sent, or {@link RedisFailovers#UNKNOWN_GENERATION}
	 * @return the failure to throw
	 */
	static RuntimeException told(RuntimeException failure, @Nullable RedisFailovers failovers,
			@Nullable RedisSilence silence, long sentIn) {
		RuntimeException told = (failovers != null) ? failovers.duringFailover(failure, sentIn) : failure;
		if (!(told instanceof AnnouncedRedisFailure) && silence != null && silence.isAnySilent()) {
			// The call that found Redis silent: the silence was warned of as it was found.
			told = new AnnouncedRedisFailure(silence.describe() + ": " + Causes.describe(failure), failure);
		}
		return told;
	}

}
