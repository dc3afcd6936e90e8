package dev.ratelimit.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

import dev.ratelimit.support.DelayingTcpProxy;
import dev.ratelimit.support.RedisServerFixture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The limiter's connection against a real redis-server behind a
 * {@link DelayingTcpProxy}: it connects with the connect timeout, loads every
 * script, refuses calls at once until it has connected, and holds each call to
 * the limiter's timeout afterwards.
 */
class RedisLimiterConnectionTests {

	/** A server of this class's own: it is frozen. */
	static final RedisServerFixture redis = RedisServerFixture.start();

	static final Duration TIMEOUT = Duration.ofMillis(100);

	private DelayingTcpProxy proxy;

	private LettuceConnectionFactory application;

	private RedisLimiterConnection limiter;

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@BeforeEach
	void emptyRedis() {
		redis.flushAll();
		redis.call("SCRIPT", "FLUSH");
	}

	@AfterEach
	void close() {
		if (this.limiter != null) {
			this.limiter.close();
		}
		if (this.application != null) {
			this.application.destroy();
		}
		this.proxy.close();
	}

	@Test
	void connectWaitsForASlowHandshakeAndLoadsEveryScript() {
		// Each new connection's first bytes take three times the limiter's timeout.
		this.proxy = DelayingTcpProxy.start(redis.port(), TIMEOUT.multipliedBy(3));
		this.limiter = limiter(Duration.ofSeconds(2));
		this.limiter.connect();

		assertThat(this.limiter.isConnected()).isTrue();
		List<RedisScript<?>> scripts = LuaScripts.all();
		// The nine drivers, the decide text of each algorithm, and the batch of decision calls.
		assertThat(scripts).hasSize(9 + dev.ratelimit.core.Algorithm.values().length + 1);
		List<Boolean> loaded = new StringRedisTemplate(this.limiter.connectionFactory())
			.execute((RedisCallback<List<Boolean>>) (connection) -> connection.scriptingCommands()
				.scriptExists(scripts.stream().map(RedisScript::getSha1).toArray(String[]::new)));
		assertThat(loaded).hasSize(scripts.size()).containsOnly(true);
	}

	@Test
	void callsFailAtOnceUntilConnectedThenGoToRedisWithoutACallerConnecting() {
		this.proxy = DelayingTcpProxy.start(redis.port(), Duration.ZERO);
		this.proxy.refuseNewConnections(true);
		this.limiter = limiter(Duration.ofSeconds(2));
		this.limiter.connect();
		assertThat(this.limiter.isConnected()).isFalse();
		assertThat(this.limiter.lastConnectFailure()).isNotEmpty();
		int attemptsSoFar = this.proxy.connectionsAccepted();

		StringRedisTemplate template = new StringRedisTemplate(this.limiter.connectionFactory());
		for (int i = 0; i < 10; i++) {
			assertThatExceptionOfType(RedisConnectionFailureException.class)
				.isThrownBy(() -> template.opsForValue().get("k"))
				.withMessageContaining("has not connected to Redis at 127.0.0.1:" + this.proxy.port());
		}
		// Refused by the limiter itself: none of the calls opened a connection.
		assertThat(this.proxy.connectionsAccepted()).isEqualTo(attemptsSoFar);

		this.proxy.delayNewConnections(Duration.ofSeconds(1));
		this.proxy.refuseNewConnections(false);
		await().atMost(Duration.ofSeconds(30)).until(this.limiter::isConnected);
		template.opsForValue().set("k", "v");
		assertThat(template.opsForValue().get("k")).isEqualTo("v");
		assertThat(this.limiter.lastConnectFailure()).isNull();
	}

	@Test
	void onceConnectedACallWaitsAtMostTheLimitersTimeoutThoughConnectsMayTakeLonger() {
		this.proxy = DelayingTcpProxy.start(redis.port(), Duration.ZERO);
		this.limiter = limiter(Duration.ofSeconds(5));
		this.limiter.connect();
		StringRedisTemplate template = new StringRedisTemplate(this.limiter.connectionFactory());
		redis.pause();
		try {
			for (int i = 0; i < 5; i++) {
				long start = System.nanoTime();
				assertThatExceptionOfType(QueryTimeoutException.class)
					.isThrownBy(() -> template.opsForValue().get("k"));
				long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
				// Not Lettuce's own expiry, which ticks every 100 ms and would let a call wait up to 200 ms. The
				// silence is counted from Redis's last reply, which may come a moment before this call starts.
				assertThat(waited).as("call while Redis is frozen, in ms")
					.isBetween(TIMEOUT.toMillis() - 10, TIMEOUT.toMillis() + 75);
			}
		}
		finally {
			redis.resume();
		}
	}

	@Test
	void jedisFactoryIsUsedAsItIsAndGetsTheScriptsAtStartUp() {
		this.proxy = DelayingTcpProxy.start(redis.port(), Duration.ZERO);
		JedisConnectionFactory jedis = new JedisConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", this.proxy.port()));
		jedis.afterPropertiesSet();
		jedis.start();
		try (RedisLimiterConnection connection = new RedisLimiterConnection(jedis, TIMEOUT, Duration.ofSeconds(2))) {
			connection.connect();
			assertThat(connection.connectionFactory()).isSameAs(jedis);
			assertThat(connection.isConnected()).isTrue();
			assertThat(connection.address()).isEqualTo("127.0.0.1:" + this.proxy.port());
			String sha = LuaScripts.all().get(0).getSha1();
			assertThat(new StringRedisTemplate(jedis).execute((RedisCallback<List<Boolean>>) (redisConnection) ->
					redisConnection.scriptingCommands().scriptExists(sha)))
				.containsExactly(true);
		}
		finally {
			jedis.destroy();
		}
	}

	private RedisLimiterConnection limiter(Duration connectTimeout) {
		this.application = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", this.proxy.port()));
		this.application.afterPropertiesSet();
		this.application.start();
		return new RedisLimiterConnection(this.application, TIMEOUT, connectTimeout);
	}

}
