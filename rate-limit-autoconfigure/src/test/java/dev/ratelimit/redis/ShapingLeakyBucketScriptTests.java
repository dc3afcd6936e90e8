package dev.ratelimit.redis;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;

import static dev.ratelimit.redis.BackendComparison.Step.queued;
import static dev.ratelimit.redis.BackendComparison.Step.step;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Replays timelines against {@code leaky_bucket_shaping.lua} (a queue) on a
 * real Redis and against the in-memory backend, with the decisions and delays
 * worked out by hand.
 */
class ShapingLeakyBucketScriptTests extends ScriptTestSupport {

	@Test
	void requestsQueueForConsecutiveTurnsUpToTheCapacity() {
		// One turn every 500 ms, at most 3 units queued.
		RateLimitPolicy policy = bucket(Algorithm.LEAKY_BUCKET_SHAPING, 3, "2/1s");
		this.backends.play(policy, key(policy),
				//     at µs      cost remaining resetAfter delay
				queued(0,         1,   2,        500_000,   0),
				queued(0,         1,   1,        1_000_000, 500_000),
				queued(0,         1,   0,        1_500_000, 1_000_000),
				//   at µs       cost allowed remaining retryAfter resetAfter
				step(0,          1,   false,  0,        500_000,   1_500_000),
				step(250_000,    1,   false,  0,        250_000,   1_250_000),
				step(500_000,    2,   false,  1,        500_000,   1_000_000),
				queued(500_000,   1,   0,        1_500_000, 1_000_000),
				queued(5_000_000, 0,   3,        0,         0));
	}

	@Test
	void turnsThatDoNotDivideTheMicrosecondKeepTheirRemainder() {
		// 3 per second: turns at 0, 333,333.3 and 666,666.7 us.
		RateLimitPolicy policy = bucket(Algorithm.LEAKY_BUCKET_SHAPING, 2, "3/1s");
		String key = key(policy);
		this.backends.play(policy, key,
				queued(0,       1, 1, 333_334, 0),
				queued(0,       1, 0, 666_667, 333_334),
				step(333_333,   1, false, 0, 1, 333_334),
				queued(333_334, 1, 0, 666_666, 333_333));
		// The queue drains at 333,334 + 666,666 us exactly, no remainder.
		assertThat(this.backends.storedNumbers(key))
			.containsExactly(Long.toString(BackendComparison.START_MICROS + 1_000_000), "0");
	}

	@Test
	void queueDrainingWithinTheCurrentMicrosecondStillHoldsIt() {
		// One turn of 333,333.3 us: the queue drains a third of a microsecond after 333,333.
		RateLimitPolicy policy = bucket(Algorithm.LEAKY_BUCKET_SHAPING, 1, "3/1s");
		this.backends.play(policy, key(policy),
				queued(0,       1, 0, 333_334, 0),
				step(333_333,   1, false, 0, 1, 1),
				queued(333_334, 1, 0, 333_334, 0));
	}

	@Test
	void keyLivesUntilTheQueueDrainsAndAnEmptyQueueLeavesNoKey() {
		RateLimitPolicy policy = bucket(Algorithm.LEAKY_BUCKET_SHAPING, 3, "2/1s");
		String key = key(policy);
		this.backends.play(policy, key, queued(0, 3, 0, 1_500_000, 0));
		assertThat(this.backends.checkedTtlMillis(key)).isBetween(1_400L, 1_500L);
		this.backends.play(policy, key, queued(1_500_000, 0, 3, 0, 0));
		assertThat(this.backends.redis().hasKey(key)).isFalse();
	}

}
