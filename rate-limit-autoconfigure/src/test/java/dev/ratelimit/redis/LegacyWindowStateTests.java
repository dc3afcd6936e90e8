package dev.ratelimit.redis;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Window counts written by versions that kept window numbers (fields
 * {@code w}, {@code c}, {@code p}) are read after an upgrade, not forgotten: a
 * caller who spent its window before the upgrade is still refused after it.
 */
class LegacyWindowStateTests extends SharedRedisTests {

	private static final long MINUTE = 60_000_000L;

	/** A whole quarter of an hour since the epoch, window 1,963,584 of 15 minutes. */
	private static final long QUARTER_START = 1_767_225_600_000_000L;

	private final ManualTimeSource clock = new ManualTimeSource(QUARTER_START + 5 * MINUTE);

	private RedisRateLimitBackend backend;

	private final LimitKeys keys = new LimitKeys("rl", 128);

	@BeforeEach
	void backend() {
		this.backend = new RedisRateLimitBackend(connectionFactory, this.clock);
	}

	@Test
	void fixedWindowCountedBeforeTheUpgradeStillCounts() {
		RateLimitPolicy logins = RateLimitPolicy.builder("logins")
			.algorithm(Algorithm.FIXED_WINDOW)
			.capacity(5)
			.window("15m")
			.build();
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
	void slidingCounterCountedBeforeTheUpgradeStillWeighs() {
		RateLimitPolicy calls = RateLimitPolicy.builder("calls")
			.algorithm(Algorithm.SLIDING_WINDOW_COUNTER)
			.capacity(10)
			.window("15m")
			.build();
		String key = this.keys.build("calls", "bob");
		long window = QUARTER_START / (15 * MINUTE);
		// 4 in this window, 9 in the one before: a third of the way in, 4 + 9 × 2/3 = 10 weighs.
		server.call("HSET", key, "w", Long.toString(window), "c", "4", "p", "9");
		assertThat(this.backend.tryConsume(calls, key, 1).allowed()).isFalse();
	}

}
