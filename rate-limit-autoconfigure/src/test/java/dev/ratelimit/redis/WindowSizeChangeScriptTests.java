package dev.ratelimit.redis;

import java.util.List;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Acquisition;
import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Quota;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Take;
import dev.ratelimit.memory.InMemoryRateLimitBackend;
import dev.ratelimit.support.ManualTimeSource;

import static dev.ratelimit.redis.BackendComparison.Step.step;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A window size that changes while a key has counts (a plan switch, a refresh,
 * an override), replayed against the scripts and the in-memory backend: the
 * current window keeps its count until it ends, then the new size's windows
 * apply; no key is locked out, no count forgotten early, and no late give-back
 * makes room. The start time is a whole hour, so every window here begins on
 * it.
 */
class WindowSizeChangeScriptTests extends ScriptTestSupport {

	static final long MINUTE = 60 * SECOND;

	static final long HOUR = 60 * MINUTE;

	@Test
	void fixedWindowLengthenedKeepsTheCountUntilTheOldWindowEnds() {
		// The sample's failed-logins, 5 per 15m, overridden to 5 per 1h.
		RateLimitPolicy quarter = window(Algorithm.FIXED_WINDOW, 5, "15m");
		RateLimitPolicy hour = resized(quarter, HOUR);
		String key = key(quarter);
		this.backends.play(quarter, key, step(10 * MINUTE, 5, true, 0, 0, 5 * MINUTE));
		this.backends.play(hour, key,
				// Refused until the 15m window ends, not for thousands of years.
				step(12 * MINUTE, 1, false, 0, 3 * MINUTE, 3 * MINUTE),
				// Then the hour's window, counting from 15m.
				step(15 * MINUTE, 1, true, 4, 0, 45 * MINUTE));
		assertThat(this.backends.checkedTtlMillis(key)).isBetween(0L, HOUR / 1000);
		this.backends.play(hour, key,
				step(50 * MINUTE, 4, true, 0, 0, 10 * MINUTE),
				step(59 * MINUTE, 1, false, 0, MINUTE, MINUTE),
				step(60 * MINUTE, 5, true, 0, 0, HOUR));
	}

	@Test
	void fixedWindowShortenedKeepsTheCountUntilTheNewWindowOfItsLastUnitEnds() {
		RateLimitPolicy hour = window(Algorithm.FIXED_WINDOW, 5, "1h");
		RateLimitPolicy quarter = resized(hour, 15 * MINUTE);
		String key = key(hour);
		this.backends.play(hour, key,
				step(5 * MINUTE, 3, true, 2, 0, 55 * MINUTE),
				step(18 * MINUTE, 2, true, 0, 0, 42 * MINUTE));
		this.backends.play(quarter, key,
				// Not forgotten at once: kept until the 15m window of the last unit ends,
				// not held until the hour's end.
				step(20 * MINUTE, 1, false, 0, 10 * MINUTE, 10 * MINUTE),
				step(30 * MINUTE, 2, true, 3, 0, 15 * MINUTE));
		assertThat(this.backends.checkedTtlMillis(key)).isBetween(0L, 15 * MINUTE / 1000);
		this.backends.play(quarter, key,
				step(44 * MINUTE, 4, false, 3, MINUTE, MINUTE));
	}

	@Test
	void fixedWindowShortenedForgetsOnlyWhatTheNewWindowsWouldHaveForgotten() {
		RateLimitPolicy hour = window(Algorithm.FIXED_WINDOW, 5, "1h");
		RateLimitPolicy quarter = resized(hour, 15 * MINUTE);
		String key = key(hour);
		// Counted in [0, 15m) under 15m windows: gone by 20m under them too.
		this.backends.play(hour, key, step(5 * MINUTE, 5, true, 0, 0, 55 * MINUTE));
		this.backends.play(quarter, key, step(20 * MINUTE, 1, true, 4, 0, 10 * MINUTE));
	}

	@Test
	void fixedWindowShortenedNearTheOldEndKeepsTheCountUntilThen() {
		RateLimitPolicy hour = window(Algorithm.FIXED_WINDOW, 5, "1h");
		RateLimitPolicy quarter = resized(hour, 15 * MINUTE);
		String key = key(hour);
		this.backends.play(hour, key,
				step(5 * MINUTE, 3, true, 2, 0, 55 * MINUTE),
				step(52 * MINUTE, 2, true, 0, 0, 8 * MINUTE));
		this.backends.play(quarter, key,
				step(55 * MINUTE, 1, false, 0, 5 * MINUTE, 5 * MINUTE),
				step(60 * MINUTE, 1, true, 4, 0, 15 * MINUTE));
	}

	@Test
	void slidingCounterLengthenedKeepsTheCountAndWeighsItOverTheNewWindow() {
		RateLimitPolicy quarter = window(Algorithm.SLIDING_WINDOW_COUNTER, 10, "15m");
		RateLimitPolicy hour = resized(quarter, HOUR);
		String key = key(quarter);
		this.backends.play(quarter, key, step(10 * MINUTE, 10, true, 0, 0, 20 * MINUTE));
		this.backends.play(hour, key,
				// The 15m window keeps its 10 until 15m; then they weigh as the previous
				// window of an hour, 9 at 21m, leaving room for 1.
				step(12 * MINUTE, 1, false, 0, 9 * MINUTE, 63 * MINUTE),
				step(21 * MINUTE, 1, true, 0, 0, 99 * MINUTE));
		assertThat(this.backends.checkedTtlMillis(key)).isBetween(0L, 2 * HOUR / 1000);
		this.backends.play(hour, key,
				step(22 * MINUTE, 1, false, 0, 5 * MINUTE, 98 * MINUTE),
				// By 75m the 10 counted before 15m weigh nothing, the 1 counted at 21m 0.75.
				step(75 * MINUTE, 9, true, 0, 0, 105 * MINUTE));
	}

	@Test
	void slidingCounterShortenedWeighsTheCountAsTheNewWindowsWould() {
		RateLimitPolicy hour = window(Algorithm.SLIDING_WINDOW_COUNTER, 10, "1h");
		RateLimitPolicy quarter = resized(hour, 15 * MINUTE);
		String key = key(hour);
		this.backends.play(hour, key, step(5 * MINUTE, 10, true, 0, 0, 115 * MINUTE));
		this.backends.play(quarter, key,
				// The 10 counted at 5m fall in the 15m window [0, 15m): at 20m they weigh
				// as its successor's previous window, 10 x 10/15.
				step(20 * MINUTE, 1, true, 2, 0, 25 * MINUTE),
				step(21 * MINUTE, 3, true, 0, 0, 24 * MINUTE));
		assertThat(this.backends.checkedTtlMillis(key)).isBetween(0L, 2 * 15 * MINUTE / 1000);
		this.backends.play(quarter, key,
				// At 22m 30s the 10 weigh 5, leaving room for 1.
				step(22 * MINUTE, 1, false, 0, 30 * SECOND, 23 * MINUTE),
				step(22 * MINUTE + 30 * SECOND, 1, true, 0, 0, 22 * MINUTE + 30 * SECOND),
				step(60 * MINUTE, 10, true, 0, 0, 30 * MINUTE));
	}

	@Test
	void slidingCounterShortenedKeepsRecentCountsInTheCurrentWindow() {
		RateLimitPolicy hour = window(Algorithm.SLIDING_WINDOW_COUNTER, 10, "1h");
		RateLimitPolicy quarter = resized(hour, 15 * MINUTE);
		String key = key(hour);
		this.backends.play(hour, key,
				step(5 * MINUTE, 4, true, 6, 0, 115 * MINUTE),
				step(18 * MINUTE, 6, true, 0, 0, 102 * MINUTE));
		this.backends.play(quarter, key,
				// All 10 stay current until the 15m window of the last unit ends.
				step(20 * MINUTE, 1, false, 0, 10 * MINUTE + 90 * SECOND, 25 * MINUTE),
				step(31 * MINUTE + 30 * SECOND, 1, true, 0, 0, 28 * MINUTE + 30 * SECOND));
	}

	@Test
	void giveBackAfterTheSizeChangesUncountsOnlyWhereTheUnitsStillCount() {
		ManualTimeSource clock = new ManualTimeSource(BackendComparison.START_MICROS);
		for (RateLimitBackend backend : List.of(new InMemoryRateLimitBackend(clock, 10),
				new RedisRateLimitBackend(connectionFactory, clock))) {
			for (Algorithm algorithm : List.of(Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW_COUNTER)) {
				server.flushAll();
				RateLimitPolicy hour = RateLimitPolicy.builder("give-back-" + algorithm)
					.algorithm(algorithm)
					.capacity(2)
					.window("1h")
					.build();
				RateLimitPolicy quarter = resized(hour, 15 * MINUTE);
				String key = key(hour);
				String as = backend.getClass().getSimpleName() + " " + algorithm;
				// Taken in the hour's window, given back after a cut to 15m: still counted, so uncounted.
				clock.advanceMicros(5 * MINUTE);
				Take early = take(backend, hour, key);
				clock.advanceMicros(5 * MINUTE);
				take(backend, hour, key);
				backend.giveBack(quarter, key, 1, early.receipt());
				assertThat(backend.tryConsume(quarter, key, 1).allowed()).as(as).isTrue();
				// Taken under 15m, given back under 1h once the 15m window has passed: no room made.
				clock.advanceMicros(HOUR - 10 * MINUTE + 14 * MINUTE);
				Take late = take(backend, quarter, key);
				take(backend, quarter, key);
				clock.advanceMicros(2 * MINUTE);
				// A window two back: nothing of it counts any more.
				backend.giveBack(hour, key, 1, early.receipt());
				backend.giveBack(hour, key, 1, late.receipt());
				if (algorithm == Algorithm.FIXED_WINDOW) {
					// The 15m window has passed: its units count no more.
					assertThat(backend.tryConsume(hour, key, 2).allowed()).as(as).isTrue();
				}
				else {
					// The 15m window is the previous one and still weighs: one of its 2 given back.
					assertThat(backend.tryConsume(hour, key, 1).allowed()).as(as).isTrue();
				}
				assertThat(backend.tryConsume(hour, key, 1).allowed()).as(as).isFalse();
				clock.advanceMicros(2 * HOUR - 76 * MINUTE);
			}
		}
	}

	private static Take take(RateLimitBackend backend, RateLimitPolicy policy, String key) {
		Take take = backend.tryTakeAll(List.of(new Acquisition(policy, key, 1))).get(0);
		assertThat(take.tookUnits()).as("%s %s", backend.getClass().getSimpleName(), take).isTrue();
		return take;
	}

	private static RateLimitPolicy resized(RateLimitPolicy policy, long windowMicros) {
		return policy.withQuota(new Quota(null, null, windowMicros, null, null));
	}

}
