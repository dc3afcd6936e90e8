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
 * Window counts written by earlier versions are read after an upgrade, not
 * forgotten: hashes with times (fields {@code s}, {@code e}, {@code l},
 * {@code n}, and {@code ps}, {@code pn} for the sliding counter), kept until
 * the state became one string, and before them hashes with window numbers
 * (fields {@code w}, {@code c}, {@code p}). A caller who spent its window
 * before the upgrade is still refused after it, and the next write replaces
 * the hash with the string. A string that is not a window's numbers is an
 * error, never an empty window.
 */
class LegacyWindowStateTests extends SharedRedisTests {

	private static final long MINUTE = 60_000_000L;

	/** A whole quarter of an hour since the epoch, window 1,963,584 of 15 minutes. */
	private static final long QUARTER_START = 1_767_225_600_000_000L;

	private final ManualTimeSource clock = new ManualTimeSource(QUARTER_START + 5 * MINUTE);

	private RedisRateLimitBackend backend;

	private StringRedisTemplate redis;

	private final LimitKeys keys = new LimitKeys("rl", 128);

	@BeforeEach
	void backend() {
		this.backend = new RedisRateLimitBackend(connectionFactory, this.clock);
		this.redis = new StringRedisTemplate(connectionFactory);
	}

	@Test
	void fixedWindowCountedBeforeTheUpgradeStillCounts() {
		RateLimitPolicy logins = fixedWindow();
		String key = this.keys.build("logins", "alice");
		long window = QUARTER_START / (15 * MINUTE);
		server.call("HSET", key, "w", Long.toString(window), "c", "5");
		Decision refused = this.backend.tryConsume(logins, key, 1);
		assertThat(refused.allowed()).isFalse();
		assertThat(refused.retryAfterMicros()).isEqualTo(10 * MINUTE);
		// A count of an older window is over, as it was before.
		server.call("HSET", key, "w", Long.toString(window - 1), "c", "5");
		server.call("HDEL", key, "s", "e", "l", "n");
		assertThat(this.backend.tryConsume(logins, key, 1).allowed()).isTrue();
	}

	@Test
	void fixedWindowKeptAsAHashStillCountsAndIsWrittenBackAsOneString() {
		RateLimitPolicy logins = fixedWindow();
		String key = this.keys.build("logins", "dave");
		long end = QUARTER_START + 15 * MINUTE;
		server.call("HSET", key, "s", Long.toString(QUARTER_START), "e", Long.toString(end), "l",
				Long.toString(QUARTER_START + MINUTE), "n", "4");
		assertThat(this.backend.tryConsume(logins, key, 1).allowed()).isTrue();
		assertThat(this.redis.type(key).code()).isEqualTo("string");
		assertThat(this.redis.opsForValue().get(key))
			.isEqualTo(QUARTER_START + " " + end + " " + this.clock.currentTimeMicros() + " 5");
		Decision refused = this.backend.tryConsume(logins, key, 1);
		assertThat(refused.allowed()).isFalse();
		assertThat(refused.retryAfterMicros()).isEqualTo(10 * MINUTE);
	}

	@Test
	void slidingCounterKeptAsAHashStillWeighsAndIsWrittenBackAsOneString() {
		RateLimitPolicy calls = slidingCounter();
		String key = this.keys.build("calls", "erin");
		long end = QUARTER_START + 15 * MINUTE;
		long previousStart = QUARTER_START - 15 * MINUTE;
		// A third of the way in: 4 + 6 × 2/3 = 8 weigh, room for 2.
		server.call("HSET", key, "s", Long.toString(QUARTER_START), "e", Long.toString(end), "l",
				Long.toString(QUARTER_START), "n", "4", "ps", Long.toString(previousStart), "pn", "6");
		assertThat(this.backend.tryConsume(calls, key, 2).allowed()).isTrue();
		assertThat(this.redis.type(key).code()).isEqualTo("string");
		assertThat(this.redis.opsForValue().get(key))
			.isEqualTo(QUARTER_START + " " + end + " " + this.clock.currentTimeMicros() + " 6 " + previousStart + " 6");
		assertThat(this.backend.tryConsume(calls, key, 1).allowed()).isFalse();
	}

	@Test
	void aValueThatIsNotAWindowIsAnErrorNotAnEmptyWindow() {
		for (RateLimitPolicy policy : List.of(fixedWindow(), slidingCounter())) {
			String key = this.keys.build(policy.name(), "mallory");
			// A bucket's pair, too few or too many numbers for either window, spaces and signs out of place.
			for (String garbage : List.of("garbage", "5 7", "1 2 3", "1 2 3 4 5", "1 2 3 4 5 6 7", " 1 2 3 4",
					"1 2 3 4 ", "1  2 3 4", "1 2 3 x 5 6", "1.5 2 3 4", "1 2 3 4 5 +6")) {
				this.redis.opsForValue().set(key, garbage);
				assertThatThrownBy(() -> this.backend.tryConsume(policy, key, 1)).as("%s holding '%s'", policy.name(),
						garbage)
					.hasStackTraceContaining("is not the numbers its algorithm writes");
				assertThat(this.redis.opsForValue().get(key)).isEqualTo(garbage);
			}
		}
	}

	@Test
	void slidingCounterCountedBeforeTheUpgradeStillWeighs() {
		RateLimitPolicy calls = slidingCounter();
		String key = this.keys.build("calls", "bob");
		long window = QUARTER_START / (15 * MINUTE);
		// 4 in this window, 9 in the one before: a third of the way in, 4 + 9 × 2/3 = 10 weighs.
		server.call("HSET", key, "w", Long.toString(window), "c", "4", "p", "9");
		assertThat(this.backend.tryConsume(calls, key, 1).allowed()).isFalse();
	}

	private static RateLimitPolicy fixedWindow() {
		return RateLimitPolicy.builder("logins").algorithm(Algorithm.FIXED_WINDOW).capacity(5).window("15m").build();
	}

	private static RateLimitPolicy slidingCounter() {
		return RateLimitPolicy.builder("calls")
			.algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
			.capacity(10)
			.window("15m")
			.build();
	}

}
