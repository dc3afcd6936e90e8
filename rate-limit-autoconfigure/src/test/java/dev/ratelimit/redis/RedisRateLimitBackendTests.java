package dev.ratelimit.redis;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.support.RedisServerFixture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link RedisRateLimitBackend}: one round trip per decision, the
 * script cache falling back to {@code EVAL}, and Redis errors passed through.
 */
class RedisRateLimitBackendTests extends SharedRedisTests {

	private final RateLimitPolicy policy = RateLimitPolicy.builder("backend").capacity(5).refill("1/1s").build();

	private final String key = new LimitKeys("rl", 128).build(this.policy.name(), "203.0.113.7");

	private RedisRateLimitBackend backend;

	private StringRedisTemplate redis;

	@BeforeEach
	void setUp() {
		// A clock that stands still: a token refilled during a slow run must not change the counts.
		this.backend = new RedisRateLimitBackend(connectionFactory, new ManualTimeSource());
		this.redis = new StringRedisTemplate(connectionFactory);
	}

	@Test
	void eachDecisionIsOneFunctionCall() {
		this.backend.tryConsume(this.policy, this.key, 1);
		assertThat(server.call("CONFIG", "RESETSTAT")).isEqualTo("+OK");
		for (int i = 0; i < 3; i++) {
			this.backend.tryConsume(this.policy, this.key, 1);
		}
		assertThat(calls("fcall")).isEqualTo(3);
		assertThat(calls("evalsha")).isZero();
		assertThat(calls("eval")).isZero();
	}

	@Test
	void withoutFunctionsEachDecisionIsOneEvalshaAndAFlushedScriptIsSentAsEvalOnce() {
		LettuceConnectionFactory plain = server.newEvalShaConnectionFactory();
		try {
			RedisRateLimitBackend backend = new RedisRateLimitBackend(plain, new ManualTimeSource());
			assertThat(backend.tryConsume(this.policy, this.key, 1)).isEqualTo(new Decision(true, 4, 5, 1_000_000, 0));
			assertThat(server.call("SCRIPT", "FLUSH")).isEqualTo("+OK");
			assertThat(server.call("CONFIG", "RESETSTAT")).isEqualTo("+OK");
			Decision decision = backend.tryConsume(this.policy, this.key, 2);
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.remaining()).isEqualTo(2);
			assertThat(calls("evalsha")).isEqualTo(1);
			assertThat(calls("eval")).isEqualTo(1);
			// EVAL cached the script again: back to EVALSHA alone.
			backend.tryConsume(this.policy, this.key, 1);
			assertThat(calls("evalsha")).isEqualTo(2);
			assertThat(calls("eval")).isEqualTo(1);
			assertThat(calls("fcall")).isZero();
		}
		finally {
			plain.destroy();
		}
	}

	@Test
	void keyOfAnotherTypeFailsWithTheRedisError() {
		// A list is neither a bucket's string nor the hash versions before kept.
		this.redis.opsForList().leftPush(this.key, "not a bucket");
		assertThatExceptionOfType(DataAccessException.class)
			.isThrownBy(() -> this.backend.tryConsume(this.policy, this.key, 1))
			.withStackTraceContaining("WRONGTYPE");
	}

	@Test
	void unreachableServerFailsWithTheConnectionError() {
		// A port nobody listens on: the fixture's port once its server is gone.
		RedisServerFixture stopped = RedisServerFixture.start();
		stopped.close();
		LettuceConnectionFactory unreachable = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", stopped.port()));
		unreachable.afterPropertiesSet();
		unreachable.start();
		try {
			RedisRateLimitBackend failing = new RedisRateLimitBackend(unreachable);
			assertThatExceptionOfType(RedisConnectionFailureException.class)
				.isThrownBy(() -> failing.tryConsume(this.policy, this.key, 1));
		}
		finally {
			unreachable.destroy();
		}
	}

	private long calls(String command) {
		return CommandStats.calls(connectionFactory, command);
	}

}
