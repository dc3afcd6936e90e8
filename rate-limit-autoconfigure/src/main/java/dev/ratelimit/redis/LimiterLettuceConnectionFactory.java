package dev.ratelimit.redis;

import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The limiter's Lettuce connection factory, which refuses connections until
 * the limiter's own connector has opened its shared connection once. Spring
 * Data Redis opens the shared connection lazily, on the first call, and that
 * call waits for DNS, TCP, TLS and the handshake; a request thread must never
 * be that call. Until the connector succeeds every call fails at once with a
 * {@link RedisConnectionFailureException}, so that the policies' failure modes
 * and the circuit breaker apply; afterwards the shared connection stays open
 * and Lettuce reconnects it in the background, so no later call connects.
 * <p>
 * Still a {@link LettuceConnectionFactory}, so that the backends recognise a
 * standalone server and a cluster as before.
 */
final class LimiterLettuceConnectionFactory extends LettuceConnectionFactory {

	private final String address;

	private volatile boolean connected;

	LimiterLettuceConnectionFactory(RedisConfiguration configuration, LettuceClientConfiguration clientConfiguration,
			String address) {
		super(configuration, clientConfiguration);
		this.address = address;
	}

	@Override
	public RedisConnection getConnection() {
		requireConnected();
		return super.getConnection();
	}

	@Override
	public RedisClusterConnection getClusterConnection() {
		requireConnected();
		return super.getClusterConnection();
	}

	/**
	 * Opens the shared connection if it is not open, for the connector only:
	 * the one caller allowed to wait for a connect.
	 * @return a connection, to be closed by the caller (the shared connection stays open)
	 */
	RedisConnection connect() {
		// Straight to the superclass: its getConnection() of a cluster calls getClusterConnection().
		return isClusterAware() ? super.getClusterConnection() : super.getConnection();
	}

	/**
	 * Lets calls through from now on: the shared connection is open.
	 */
	void opened() {
		this.connected = true;
	}

	boolean isConnected() {
		return this.connected;
	}

	private void requireConnected() {
		if (!this.connected) {
			throw new RedisConnectionFailureException("The rate limiter has not connected to Redis at " + this.address
					+ " since start-up; it keeps connecting in the background");
		}
	}

}
