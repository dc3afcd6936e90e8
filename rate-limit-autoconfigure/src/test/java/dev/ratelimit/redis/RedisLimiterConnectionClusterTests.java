package dev.ratelimit.redis;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.support.RedisClusterFixture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The limiter's connection to a real three-master Redis Cluster: connecting
 * loads every script on every node, so that no node answers the first
 * {@code EVALSHA} with {@code NOSCRIPT}.
 */
class RedisLimiterConnectionClusterTests {

	private static final RedisClusterFixture cluster = RedisClusterFixture.shared();

	@Test
	void connectLoadsEveryScriptOnEveryNode() {
		cluster.flushAll();
		for (int port : cluster.ports()) {
			cluster.call(port, "SCRIPT", "FLUSH");
		}
		LettuceConnectionFactory application = cluster.newConnectionFactory();
		try (RedisLimiterConnection limiter = new RedisLimiterConnection(application, Duration.ofMillis(500),
				Duration.ofSeconds(5))) {
			limiter.connect();
			assertThat(limiter.isConnected()).isTrue();
			assertThat(limiter.address()).startsWith("cluster 127.0.0.1:");
			List<RedisScript<List<Object>>> scripts = LuaScripts.all();
			for (int port : cluster.ports()) {
				for (RedisScript<List<Object>> script : scripts) {
					// Run without arguments: an error of the script itself, but never NOSCRIPT.
					assertThat(cluster.call(port, "EVALSHA", script.getSha1(), "0")).as("node %d", port)
						.doesNotStartWith("-NOSCRIPT");
				}
			}
			RateLimitPolicy policy = RateLimitPolicy.builder("p").capacity(5).refill("5/1s").build();
			Decision decision = new RedisRateLimitBackend(limiter.connectionFactory()).tryConsume(policy,
					"rl:p:{someone}", 1);
			assertThat(decision.allowed()).isTrue();
		}
		finally {
			application.destroy();
		}
	}

}
