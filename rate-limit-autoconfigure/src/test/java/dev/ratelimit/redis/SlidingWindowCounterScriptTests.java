package dev.ratelimit.redis;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;

import static dev.ratelimit.redis.BackendComparison.Step.step;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Replays timelines against {@code sliding_window_counter.lua} on a real Redis
 * and against the in-memory backend, with the weighted estimates worked out by
 * hand. Windows of a second begin at 0, 1 s, 2 s.
 */
class SlidingWindowCounterScriptTests extends ScriptTestSupport {

	@Test
	void previousWindowWeighsLessAsTheWindowSlides() {
		RateLimitPolicy policy = window(Algorithm.SLIDING_WINDOW_COUNTER, 10, "1s");
		this.backends.play(policy, key(policy),
				//   at µs       cost allowed remaining retryAfter resetAfter
				step(0,          4,   true,   6,        0,         2_000_000),
				step(500_000,    6,   true,   0,        0,         1_500_000),
				// 10 x 3/4 of the previous window + 3 > 10; at 3/10 it weighs 7.
				step(1_250_000,  3,   false,  2,        50_000,    750_000),
				step(1_300_000,  3,   true,   0,        0,         1_700_000),
				step(1_300_000,  1,   false,  0,        100_000,   1_700_000),
				// Room only once this window's 3 are the previous window's at full weight.
				step(1_999_999,  7,   false,  6,        1,         1_000_001),
				step(2_000_000,  7,   true,   0,        0,         2_000_000),
				step(5_000_000,  0,   true,   10,       0,         0));
	}

	@Test
	void fullWindowWaitsIntoTheNextWindowUntilItsWeightLeavesRoom() {
		RateLimitPolicy policy = window(Algorithm.SLIDING_WINDOW_COUNTER, 10, "1s");
		this.backends.play(policy, key(policy),
				step(0,         10, true,  0, 0,         2_000_000),
				// At 1.5 s the 10 weigh 5, leaving room for 5.
				step(500_000,   5,  false, 0, 1_000_000, 1_500_000),
				step(1_500_000, 5,  true,  0, 0,         1_500_000));
	}

	@Test
	void keyLivesUntilNothingCountedWeighsOnTheEstimate() {
		RateLimitPolicy policy = window(Algorithm.SLIDING_WINDOW_COUNTER, 10, "1s");
		String key = key(policy);
		this.backends.play(policy, key, step(250_000, 1, true, 9, 0, 1_750_000));
		// Until the end of the next window, when the 1 no longer weighs.
		assertThat(this.backends.checkedTtlMillis(key)).isBetween(1_650L, 1_750L);
		// Only the previous window counts: until the end of this one.
		this.backends.play(policy, key, step(1_500_000, 0, true, 9, 0, 500_000));
		assertThat(this.backends.checkedTtlMillis(key)).isBetween(400L, 500L);
		// Nothing counted in this window (last asked at 1.5 s), 1 in the previous one, which ended when this one began.
		long start = BackendComparison.START_MICROS + SECOND;
		assertThat(this.backends.storedNumbers(key)).containsExactly(Long.toString(start),
				Long.toString(start + SECOND), Long.toString(start + 500_000), "0",
				Long.toString(BackendComparison.START_MICROS + 250_000), "1");
		this.backends.play(policy, key, step(2_000_000, 0, true, 10, 0, 0));
		assertThat(this.backends.redis().hasKey(key)).isFalse();
	}

}
