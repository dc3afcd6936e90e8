package dev.ratelimit.support;

import java.time.Duration;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.redis.RedisLimiterConnection;

/**
 * The connection factory production uses: the limiter's own, connected, with
 * its function library loaded, so that the scripts run as {@code FCALL}.
 * The fixtures hand these out by default, with decisions coalesced, so that
 * every script test also runs the coalesced path (a lone decision goes as a
 * call of its own there too); a plain Lettuce factory runs the same scripts as
 * {@code EVALSHA}.
 */
final class LimiterFactories {

	/** Generous: tests on a busy 2-core machine, not a request path. */
	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private LimiterFactories() {
	}

	/**
	 * Returns the limiter's factory to the server {@code template} describes,
	 * connected; destroying it also stops its connector.
	 * @param template a factory describing the server, never started
	 * @return the limiter's factory
	 */
	static LettuceConnectionFactory withFunctions(LettuceConnectionFactory template) {
		return withFunctions(template, RedisLimiterConnection.Coalescing.ON);
	}

	/**
	 * Returns the limiter's factory to the server {@code template} describes,
	 * connected, its decisions coalesced or not.
	 * @param template a factory describing the server, never started
	 * @param coalescing whether decisions waiting at the same moment go as one call
	 * @return the limiter's factory
	 */
	static LettuceConnectionFactory withFunctions(LettuceConnectionFactory template,
			RedisLimiterConnection.Coalescing coalescing) {
		RedisLimiterConnection limiter = new RedisLimiterConnection(template, TIMEOUT, TIMEOUT, TIMEOUT, true,
				RedisLimiterConnection.Durability.NONE, Duration.ofSeconds(10), coalescing);
		limiter.connect();
		if (!limiter.isConnected()) {
			limiter.close();
			throw new IllegalStateException("The limiter could not connect to Redis at " + limiter.address() + ": "
					+ limiter.lastConnectFailure());
		}
		if (!limiter.usesFunctions()) {
			// Never the EVALSHA path by accident: a library Redis refused fails here, not silently.
			limiter.close();
			throw new IllegalStateException("Redis at " + limiter.address() + " did not load the limiter's functions");
		}
		return (LettuceConnectionFactory) limiter.connectionFactory();
	}

}
