package dev.ratelimit.redis;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.TokenBucket;
import dev.ratelimit.memory.InMemoryRateLimitBackend;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Makes the same decisions with the in-memory backend and the Redis backend on
 * one manual clock, and checks that both agree with {@link TokenBucket} run on
 * a bucket that is never dropped, and that Redis holds exactly the state each
 * decision implies: no key for a full bucket, otherwise a TTL of the reset time
 * rounded up to milliseconds.
 * <p>
 * Redis expires keys on its own wall clock, which the manual clock does not
 * drive: once the TTL is checked the key is made persistent, so that a slow
 * test run cannot expire it early. A persistent bucket is still refilled by
 * the script as time passes, so this changes no decision.
 */
final class BackendComparison {

	/** 2026-01-01T00:00:00Z: realistic times are near 2^51 microseconds. */
	static final long START_MICROS = 1_767_225_600_000_000L;

	private final ManualTimeSource clock = new ManualTimeSource(START_MICROS);

	private final RateLimitBackend memory = new InMemoryRateLimitBackend(this.clock, 10_000);

	private final RateLimitBackend redisBackend;

	private final StringRedisTemplate redis;

	private final Map<String, TokenBucket.State> model = new HashMap<>();

	private long offsetMicros;

	BackendComparison(RedisConnectionFactory connectionFactory) {
		this.redisBackend = new RedisRateLimitBackend(connectionFactory, this.clock);
		this.redis = new StringRedisTemplate(connectionFactory);
	}

	/**
	 * Plays a timeline, asserting each decision of both backends.
	 * @param policy the policy
	 * @param key the storage key
	 * @param steps the timeline, in time order
	 */
	void play(RateLimitPolicy policy, String key, Step... steps) {
		for (int i = 0; i < steps.length; i++) {
			Step step = steps[i];
			Decision decision = decideAt(step.atMicros(), policy, key, step.cost());
			assertThat(decision).as("step %d at %dus, cost %d", i, step.atMicros(), step.cost())
				.isEqualTo(step.expected(policy));
		}
	}

	/**
	 * Moves the clock to {@code atMicros} after the start and decides with both
	 * backends, asserting that they agree with the model.
	 * @param atMicros the time since the start, never earlier than the last one
	 * @param policy the policy
	 * @param key the storage key
	 * @param cost the cost
	 * @return the decision both backends made
	 */
	Decision decideAt(long atMicros, RateLimitPolicy policy, String key, long cost) {
		assertThat(atMicros).as("timeline goes forward").isGreaterThanOrEqualTo(this.offsetMicros);
		this.clock.advanceMicros(atMicros - this.offsetMicros);
		this.offsetMicros = atMicros;
		long now = this.clock.currentTimeMicros();
		TokenBucket.State state = this.model.computeIfAbsent(key, (k) -> new TokenBucket.State(policy, now));
		Decision expected = TokenBucket.consume(policy, state, cost, now);
		long startNanos = System.nanoTime();
		Decision redisDecision = this.redisBackend.tryConsume(policy, key, cost);
		assertThat(redisDecision).as("Redis backend at %dus, cost %d", atMicros, cost).isEqualTo(expected);
		assertStoredState(key, redisDecision, startNanos);
		Decision memoryDecision = this.memory.tryConsume(policy, key, cost);
		assertThat(memoryDecision).as("in-memory backend at %dus, cost %d", atMicros, cost).isEqualTo(expected);
		return expected;
	}

	/**
	 * Removes the key as Redis does when its TTL fires.
	 * @param key the storage key
	 */
	void expire(String key) {
		assertThat(this.redis.delete(key)).as("key %s existed", key).isTrue();
	}

	/**
	 * Returns a field of the stored bucket.
	 * @param key the storage key
	 * @param field {@code t} or {@code ts}
	 * @return the stored text, or {@code null}
	 */
	String storedField(String key, String field) {
		return (String) this.redis.opsForHash().get(key, field);
	}

	private void assertStoredState(String key, Decision decision, long startNanos) {
		if (decision.resetAfterMicros() == 0) {
			assertThat(this.redis.hasKey(key)).as("a full bucket leaves no key").isFalse();
			return;
		}
		long ttlMillis = -Math.floorDiv(-decision.resetAfterMicros(), 1_000L);
		Long remainingMillis = this.redis.getExpire(key, TimeUnit.MILLISECONDS);
		// Redis counts down in real time from the moment the script ran.
		long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos) + 1;
		assertThat(remainingMillis).as("PTTL of %s for reset after %dus", key, decision.resetAfterMicros())
			.isBetween(ttlMillis - elapsedMillis, ttlMillis);
		assertThat(this.redis.persist(key)).isTrue();
	}

	/**
	 * One request of a timeline and the decision expected for it.
	 *
	 * @param atMicros time since the start
	 * @param cost the cost
	 * @param allowed whether it is allowed
	 * @param remaining the tokens left
	 * @param retryAfterMicros the expected retry-after
	 * @param resetAfterMicros the expected reset-after
	 */
	record Step(long atMicros, long cost, boolean allowed, long remaining, long retryAfterMicros,
			long resetAfterMicros) {

		static Step step(long atMicros, long cost, boolean allowed, long remaining, long retryAfterMicros,
				long resetAfterMicros) {
			return new Step(atMicros, cost, allowed, remaining, retryAfterMicros, resetAfterMicros);
		}

		Decision expected(RateLimitPolicy policy) {
			return new Decision(this.allowed, this.remaining, policy.capacity(), this.resetAfterMicros,
					this.retryAfterMicros);
		}

	}

}
