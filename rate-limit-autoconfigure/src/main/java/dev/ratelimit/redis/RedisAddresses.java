package dev.ratelimit.redis;

import java.util.Objects;
import java.util.stream.Collectors;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisNode;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisSocketConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.RedisStaticMasterReplicaConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.ClassUtils;

/**
 * Says where a connection factory connects, for log lines and health details:
 * {@code host:port}, a socket, a Sentinel master and its sentinels, or a
 * cluster's seed nodes. Never a password.
 */
final class RedisAddresses {

	private RedisAddresses() {
	}

	static String describe(RedisConnectionFactory factory) {
		if (factory instanceof LettuceConnectionFactory lettuce) {
			return describe(LimiterConnectionFactories.configuration(lettuce));
		}
		// Jedis' classes only load with Jedis present.
		if (ClassUtils.isPresent("redis.clients.jedis.Jedis", RedisAddresses.class.getClassLoader())
				&& Jedis.isFactory(factory)) {
			return describe(Jedis.configuration(factory));
		}
		return factory.getClass().getName();
	}

	static String describe(RedisConfiguration configuration) {
		if (configuration instanceof RedisStandaloneConfiguration standalone) {
			return standalone.getHostName() + ":" + standalone.getPort();
		}
		if (configuration instanceof RedisSocketConfiguration socket) {
			return socket.getSocket();
		}
		if (configuration instanceof RedisSentinelConfiguration sentinel) {
			String master = (sentinel.getMaster() != null) ? sentinel.getMaster().getName() : "?";
			return "master '" + master + "' of sentinels " + nodes(sentinel.getSentinels());
		}
		if (configuration instanceof RedisClusterConfiguration cluster) {
			return "cluster " + nodes(cluster.getClusterNodes());
		}
		if (configuration instanceof RedisStaticMasterReplicaConfiguration replicas) {
			return replicas.getNodes().stream().map(RedisAddresses::describe).collect(Collectors.joining(", "));
		}
		return configuration.getClass().getName();
	}

	private static String nodes(Iterable<RedisNode> nodes) {
		StringBuilder text = new StringBuilder();
		for (RedisNode node : nodes) {
			text.append((text.length() > 0) ? ", " : "").append(node.getHost()).append(':').append(node.getPort());
		}
		return text.toString();
	}

	private static final class Jedis {

		static boolean isFactory(RedisConnectionFactory factory) {
			return factory instanceof JedisConnectionFactory;
		}

		static RedisConfiguration configuration(RedisConnectionFactory factory) {
			JedisConnectionFactory jedis = (JedisConnectionFactory) factory;
			if (jedis.isRedisClusterAware() && jedis.getClusterConfiguration() != null) {
				return jedis.getClusterConfiguration();
			}
			if (jedis.isRedisSentinelAware() && jedis.getSentinelConfiguration() != null) {
				return jedis.getSentinelConfiguration();
			}
			return Objects.requireNonNull(jedis.getStandaloneConfiguration(), "a Jedis factory has a configuration");
		}

	}

}
