package dev.ratelimit.redis;

import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.support.RedisClusterFixture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The limiter's connection to a real three-master Redis Cluster: connecting
 * loads every script on every node, so that no node answers the first
 * {@code EVALSHA} with {@code NOSCRIPT}, and the function library on every
 * master, so that decisions are {@code FCALL}s wherever their keys live; a
 * cluster that lost the library (as a new or restarted master has) decides
 * every key without a failure and is given the library again.
 */
class RedisLimiterConnectionClusterTests {

	private static final RedisClusterFixture cluster = RedisClusterFixture.shared();

	@Test
	void connectLoadsEveryScriptOnEveryNode() {
		cluster.flushAll();
		for (int port : cluster.ports()) {
			cluster.call(port, "SCRIPT", "FLUSH");
		}
		LettuceConnectionFactory application = cluster.newEvalShaConnectionFactory();
		try (RedisLimiterConnection limiter = new RedisLimiterConnection(application, Duration.ofMillis(500),
				Duration.ofSeconds(5))) {
			limiter.connect();
			assertThat(limiter.isConnected()).isTrue();
			assertThat(limiter.address()).startsWith("cluster 127.0.0.1:");
			List<RedisScript<?>> scripts = LuaScripts.all();
			for (int port : cluster.ports()) {
				for (RedisScript<?> script : scripts) {
					// Run without arguments: an error of the script itself, but never NOSCRIPT.
					assertThat(cluster.call(port, "EVALSHA", script.getSha1(), "0")).as("node %d", port)
						.doesNotStartWith("-NOSCRIPT");
				}
			}
			assertThat(limiter.usesFunctions()).isTrue();
			for (int port : cluster.ports()) {
				assertThat(cluster.call(port, "FUNCTION", "LIST", "LIBRARYNAME", LuaScripts.libraryName()))
					.as("node %d", port)
					.isEqualTo("*1");
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

	@Test
	void mastersThatLostTheLibraryDecideEveryKeyAndAreGivenItAgain() {
		cluster.flushAll();
		LettuceConnectionFactory application = cluster.newEvalShaConnectionFactory();
		try (RedisLimiterConnection limiter = new RedisLimiterConnection(application, Duration.ofMillis(500),
				Duration.ofSeconds(5))) {
			limiter.connect();
			RedisRateLimitBackend backend = new RedisRateLimitBackend(limiter.connectionFactory());
			RateLimitPolicy policy = RateLimitPolicy.builder("p").capacity(2).refill("2/1h").build();
			// Keys of many slots: every master serves some.
			List<String> keys = IntStream.range(0, 30).mapToObj((i) -> "rl:p:{user-" + i + "}").toList();
			keys.forEach((key) -> assertThat(backend.tryConsume(policy, key, 1).remaining()).isOne());

			for (int port : cluster.ports()) {
				cluster.call(port, "FUNCTION", "FLUSH");
			}
			// Each key's second call still counts its first: never a failure, never a fresh bucket.
			keys.forEach((key) -> assertThat(backend.tryConsume(policy, key, 1).remaining()).isZero());

			await().atMost(Duration.ofSeconds(30)).until(limiter::usesFunctions);
			for (int port : cluster.ports()) {
				assertThat(cluster.call(port, "FUNCTION", "LIST", "LIBRARYNAME", LuaScripts.libraryName()))
					.as("node %d", port)
					.isEqualTo("*1");
			}
			keys.forEach((key) -> assertThat(backend.tryConsume(policy, key, 1).allowed()).isFalse());
		}
		finally {
			application.destroy();
		}
	}

}
