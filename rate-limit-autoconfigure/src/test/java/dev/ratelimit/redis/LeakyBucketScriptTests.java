package dev.ratelimit.redis;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;

import static dev.ratelimit.redis.BackendComparison.Step.step;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Replays timelines against {@code leaky_bucket.lua} (policing) on a real Redis
 * and against the in-memory backend, with the decisions worked out by hand.
 */
class LeakyBucketScriptTests extends ScriptTestSupport {

	@Test
	void twoPerSecondWithCapacityTwoPoursAndDrains() {
		RateLimitPolicy policy = bucket(Algorithm.LEAKY_BUCKET, 2, "2/1s");
		this.backends.play(policy, key(policy),
				//   at µs       cost allowed remaining retryAfter resetAfter
				step(0,          1,   true,   1,        0,         500_000),
				step(0,          1,   true,   0,        0,         1_000_000),
				step(250_000,    1,   false,  0,        250_000,   750_000),
				step(500_000,    1,   true,   0,        0,         1_000_000),
				step(2_000_000,  0,   true,   2,        0,         0));
	}

	@Test
	void rateThatDoesNotDivideTheSecondRoundsTimesUp() {
		// 3 per second: one unit drains in 333,333.3 us.
		RateLimitPolicy policy = bucket(Algorithm.LEAKY_BUCKET, 4, "3/1s");
		this.backends.play(policy, key(policy),
				step(0,       4, true,  0, 0,       1_333_334),
				step(100_000, 1, false, 0, 233_334, 1_233_334),
				// The denial wrote nothing: the level drains from the pour at 0.
				step(333_334, 1, true,  0, 0,       1_333_333),
				step(333_334, 1, false, 0, 333_333, 1_333_333));
	}

	@Test
	void keyLivesUntilTheBucketIsEmptyAndAnEmptyBucketLeavesNoKey() {
		RateLimitPolicy policy = bucket(Algorithm.LEAKY_BUCKET, 2, "2/1s");
		String key = key(policy);
		this.backends.play(policy, key, step(0, 2, true, 0, 0, 1_000_000));
		assertThat(this.backends.checkedTtlMillis(key)).isBetween(900L, 1_000L);
		assertThat(this.backends.storedNumbers(key))
			.containsExactly("1000000", Long.toString(BackendComparison.START_MICROS));
		this.backends.play(policy, key, step(1_000_000, 0, true, 2, 0, 0));
		assertThat(this.backends.redis().hasKey(key)).isFalse();
	}

	@Test
	void expiredKeyStartsEmpty() {
		RateLimitPolicy policy = bucket(Algorithm.LEAKY_BUCKET, 2, "2/1s");
		String key = key(policy);
		this.backends.play(policy, key, step(0, 2, true, 0, 0, 1_000_000));
		this.backends.expire(key);
		this.backends.play(policy, key,
				step(1_000_000, 2, true,  0, 0,       1_000_000),
				step(1_000_000, 1, false, 0, 500_000, 1_000_000));
	}

}
