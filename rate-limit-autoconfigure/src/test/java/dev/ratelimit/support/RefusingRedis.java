package dev.ratelimit.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A Redis that is down: a connection factory to a local port nothing listens
 * on, so every connection is refused at once.
 */
public final class RefusingRedis {

	private RefusingRedis() {
	}

	/**
	 * Creates a started connection factory whose connections are refused. The
	 * caller destroys it.
	 * @return the connection factory
	 */
	public static LettuceConnectionFactory connectionFactory() {
		int port;
		try (ServerSocket socket = new ServerSocket(0)) {
			port = socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		// Nothing listens on the port once the socket is closed.
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", port));
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

}
