package dev.ratelimit.redis;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;

import static dev.ratelimit.redis.BackendComparison.Step.step;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Replays timelines against {@code fixed_window.lua} on a real Redis and
 * against the in-memory backend, with the decisions worked out by hand. The
 * start time is a whole second, so windows of a second begin at 0, 1 s, 2 s.
 */
class FixedWindowScriptTests extends ScriptTestSupport {

	@Test
	void countsPerWindowAndStartsAgainAtTheBoundary() {
		RateLimitPolicy policy = window(Algorithm.FIXED_WINDOW, 3, "1s");
		this.backends.play(policy, key(policy),
				//   at µs       cost allowed remaining retryAfter resetAfter
				step(0,          2,   true,   1,        0,         1_000_000),
				step(400_000,    2,   false,  1,        600_000,   600_000),
				step(400_000,    1,   true,   0,        0,         600_000),
				step(999_999,    1,   false,  0,        1,         1),
				// The boundary burst fixed windows are known for: 3 more at once.
				step(1_000_000,  3,   true,   0,        0,         1_000_000),
				step(2_500_000,  0,   true,   3,        0,         0));
	}

	@Test
	void windowsAreAlignedToTheEpoch() {
		// 700 ms windows: the start (a multiple of 7 s) is a boundary.
		RateLimitPolicy policy = window(Algorithm.FIXED_WINDOW, 1, "700ms");
		this.backends.play(policy, key(policy),
				step(100_000, 1, true,  0, 0,       600_000),
				step(699_999, 1, false, 0, 1,       1),
				step(700_000, 1, true,  0, 0,       700_000),
				step(1_300_000, 1, false, 0, 100_000, 100_000));
	}

	@Test
	void keyLivesUntilTheWindowEndsAndAnEmptyWindowLeavesNoKey() {
		RateLimitPolicy policy = window(Algorithm.FIXED_WINDOW, 3, "1s");
		String key = key(policy);
		this.backends.play(policy, key, step(0, 0, true, 3, 0, 0));
		assertThat(this.backends.redis().hasKey(key)).isFalse();
		this.backends.play(policy, key, step(250_000, 1, true, 2, 0, 750_000));
		assertThat(this.backends.checkedTtlMillis(key)).isBetween(650L, 750L);
		// Kept in time: when the window began counting and when it ends.
		long start = BackendComparison.START_MICROS + 250_000;
		// Start, end, the last time it counted, the count.
		assertThat(this.backends.storedNumbers(key)).containsExactly(Long.toString(start),
				Long.toString(BackendComparison.START_MICROS + SECOND), Long.toString(start), "1");
	}

	@Test
	void staleWindowLeftInRedisCountsAsEmpty() {
		RateLimitPolicy policy = window(Algorithm.FIXED_WINDOW, 3, "1s");
		String key = key(policy);
		// BackendComparison persists the key: Redis still holds window 0 at 5 s.
		this.backends.play(policy, key,
				step(0,         3, true,  0, 0,       1_000_000),
				step(5_000_000, 3, true,  0, 0,       1_000_000),
				step(5_000_000, 1, false, 0, 1_000_000, 1_000_000));
	}

}
