package dev.ratelimit.redis;

import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.StringRedisTemplate;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Bucket states written by versions that kept them as hashes (token bucket
 * {@code t}/{@code ts}, leaky bucket {@code l}/{@code ts}, shaping leaky bucket
 * {@code d}/{@code r}) are read after an upgrade to one string per key, not
 * forgotten: a caller who emptied its bucket before the upgrade is still
 * refused after it, and the next write replaces the hash with the string.
 */
class LegacyBucketStateTests extends SharedRedisTests {

	private static final long NOW = 1_767_225_600_000_000L;

	private static final long HOUR = 3_600_000_000L;

	private final ManualTimeSource clock = new ManualTimeSource(NOW);

	private final LimitKeys keys = new LimitKeys("rl", 128);

	private RedisRateLimitBackend backend;

	private StringRedisTemplate redis;

	@BeforeEach
	void backend() {
		this.backend = new RedisRateLimitBackend(connectionFactory, this.clock);
		this.redis = new StringRedisTemplate(connectionFactory);
	}

	@Test
	void tokenBucketEmptiedBeforeTheUpgradeStaysEmpty() {
		RateLimitPolicy policy = bucket("tokens", Algorithm.TOKEN_BUCKET);
		String key = this.keys.build("tokens", "alice");
		// Empty since just now: 0 tokens, refilled one per 12 minutes.
		server.call("HSET", key, "t", "0", "ts", Long.toString(NOW));
		Decision refused = this.backend.tryConsume(policy, key, 1);
		assertThat(refused.allowed()).isFalse();
		assertThat(refused.retryAfterMicros()).isEqualTo(HOUR / 5);
		// A fifth of an hour later one token is back: taken, and stored as the one string.
		this.clock.advanceMicros(HOUR / 5);
		assertThat(this.backend.tryConsume(policy, key, 1).allowed()).isTrue();
		assertThat(this.redis.type(key).code()).isEqualTo("string");
		assertThat(this.redis.opsForValue().get(key)).isEqualTo("0 " + (NOW + HOUR / 5));
		assertThat(this.backend.tryConsume(policy, key, 1).allowed()).isFalse();
	}

	@Test
	void leakyBucketFilledBeforeTheUpgradeStaysFull() {
		RateLimitPolicy policy = bucket("level", Algorithm.LEAKY_BUCKET);
		String key = this.keys.build("level", "bob");
		// Full: 5 units of 12 minutes each (5/1h reduces to 1 per 12 min), scaled: one hour.
		server.call("HSET", key, "l", Long.toString(HOUR), "ts", Long.toString(NOW));
		assertThat(this.backend.tryConsume(policy, key, 1).allowed()).isFalse();
	}

	@Test
	void shapingQueueFilledBeforeTheUpgradeStaysFull() {
		RateLimitPolicy policy = bucket("queue", Algorithm.LEAKY_BUCKET_SHAPING);
		String key = this.keys.build("queue", "carol");
		// Five turns of 12 minutes queued: drains an hour from now.
		server.call("HSET", key, "d", Long.toString(NOW + HOUR), "r", "0");
		assertThat(this.backend.tryConsume(policy, key, 1).allowed()).isFalse();
	}

	@Test
	void aValueThatIsNotAStateIsAnErrorNotAFreshBucket() {
		RateLimitPolicy policy = bucket("tokens", Algorithm.TOKEN_BUCKET);
		String key = this.keys.build("tokens", "mallory");
		for (String garbage : List.of("garbage", "not numbers", "5 ", " 5")) {
			this.redis.opsForValue().set(key, garbage);
			assertThatThrownBy(() -> this.backend.tryConsume(policy, key, 1))
				.hasStackTraceContaining("is not the numbers its algorithm writes");
			assertThat(this.redis.opsForValue().get(key)).isEqualTo(garbage);
		}
	}

	private static RateLimitPolicy bucket(String name, Algorithm algorithm) {
		return RateLimitPolicy.builder(name).algorithm(algorithm).capacity(5).refill("5/1h").build();
	}

}
