package dev.ratelimit.redis;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The limiter's own connection to the application's Redis, with the limiter's
 * command and connect timeouts (see {@link LimiterConnectionFactories}).
 * Deliberately not a {@link RedisConnectionFactory} bean itself, so that it
 * never competes with the application's factory for injection. Closing it
 * stops connecting and closes the connection if it is the limiter's own.
 * <p>
 * {@link #connect()} connects and loads the limiter's scripts, waiting at
 * most the connect timeout; called while the application starts, it makes the
 * first decisions run on Redis rather than wait for a lazy connect. When Redis
 * does not answer in time the application starts anyway and the connection
 * keeps trying in the background. With Lettuce (Spring Boot's default), until
 * it has connected every limiter call fails at once, so that the failure modes
 * apply and no request thread waits for a connect; afterwards Lettuce
 * reconnects by itself. Other clients (Jedis) are used as they are: the
 * scripts are loaded at start-up when Redis answers, but each call may open a
 * connection from the client's pool, with the client's own timeouts.
 */
public final class RedisLimiterConnection implements AutoCloseable {

	private final RedisConnectionFactory application;

	private final RedisConnectionFactory limiter;

	private final LimiterConnector connector;

	/**
	 * Creates the limiter's connection to the same Redis as {@code application};
	 * nothing is connected until {@link #connect()}.
	 * @param application the application's connection factory
	 * @param timeout the timeout of each limiter command
	 * @param connectTimeout the timeout of opening a connection, and how long
	 * {@link #connect()} waits
	 */
	public RedisLimiterConnection(RedisConnectionFactory application, Duration timeout, Duration connectTimeout) {
		this.application = application;
		this.limiter = LimiterConnectionFactories.forLimiter(application, timeout, connectTimeout);
		String address = RedisAddresses.describe(application);
		if (this.limiter instanceof LimiterLettuceConnectionFactory own) {
			this.connector = new LimiterConnector(own::connect, own::opened, address, connectTimeout);
		}
		else {
			this.connector = new LimiterConnector(this.limiter::getConnection, () -> {
			}, address, connectTimeout);
		}
	}

	/**
	 * Connects and loads the limiter's scripts, waiting at most the connect
	 * timeout; when that does not succeed, logs one warning and keeps trying on
	 * a daemon thread of its own. Never throws for an unreachable Redis.
	 */
	public void connect() {
		this.connector.connectAtStartup();
	}

	/**
	 * Returns the factory limiter calls use.
	 * @return the connection factory
	 */
	public RedisConnectionFactory connectionFactory() {
		return this.limiter;
	}

	/**
	 * Returns whether the limiter has connected since start-up. Once it has, it
	 * stays true: an outage afterwards shows in the calls, not here.
	 * @return whether it connected
	 */
	public boolean isConnected() {
		return this.connector.isConnected();
	}

	/**
	 * Returns why the last connect attempt failed, while not connected.
	 * @return the failure, or {@code null}
	 */
	public @Nullable String lastConnectFailure() {
		RuntimeException failure = this.connector.lastFailure();
		return (failure != null) ? LimiterConnector.message(failure) : null;
	}

	/**
	 * Returns where the connection goes: {@code host:port}, a socket, a Sentinel
	 * master or a cluster's seed nodes.
	 * @return the address
	 */
	public String address() {
		return this.connector.address();
	}

	@Override
	public void close() {
		this.connector.close();
		if (this.limiter != this.application && this.limiter instanceof LettuceConnectionFactory own) {
			own.destroy();
		}
	}

}
