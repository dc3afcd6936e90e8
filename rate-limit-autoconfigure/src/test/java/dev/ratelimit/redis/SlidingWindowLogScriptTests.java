package dev.ratelimit.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;

import static dev.ratelimit.redis.BackendComparison.Step.step;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Replays timelines against {@code sliding_window_log.lua} on a real Redis and
 * against the in-memory backend, with the decisions worked out by hand, and
 * checks how the log is stored.
 */
class SlidingWindowLogScriptTests extends ScriptTestSupport {

	@Test
	void admitsAtMostTheCapacityInAnyWindowLongInterval() {
		RateLimitPolicy policy = window(Algorithm.SLIDING_WINDOW_LOG, 3, "1s");
		this.backends.play(policy, key(policy),
				//   at µs       cost allowed remaining retryAfter resetAfter
				step(0,          1,   true,   2,        0,         1_000_000),
				step(300_000,    2,   true,   0,        0,         1_000_000),
				// The oldest entry (cost 1) frees enough when it leaves at 1 s.
				step(600_000,    1,   false,  0,        400_000,   700_000),
				// Two units: only once the entry of 300 ms leaves as well.
				step(999_999,    2,   false,  0,        300_001,   300_001),
				step(1_000_000,  1,   true,   0,        0,         1_000_000),
				step(1_000_000,  0,   true,   0,        0,         1_000_000),
				step(1_300_000,  1,   true,   1,        0,         1_000_000),
				step(2_300_000,  0,   true,   3,        0,         0));
	}

	@Test
	void keyLivesUntilTheNewestEntryLeavesTheWindow() {
		RateLimitPolicy policy = window(Algorithm.SLIDING_WINDOW_LOG, 3, "1s");
		String key = key(policy);
		this.backends.play(policy, key,
				step(0,       1, true, 2, 0, 1_000_000),
				step(400_000, 1, true, 1, 0, 1_000_000));
		assertThat(this.backends.checkedTtlMillis(key)).isBetween(900L, 1_000L);
		// A cost of 0 writes the log without adding to it: until the entry of 400 ms leaves.
		this.backends.play(policy, key, step(1_100_000, 0, true, 2, 0, 300_000));
		assertThat(this.backends.checkedTtlMillis(key)).isBetween(200L, 300L);
		assertThat(this.backends.redis().opsForZSet().size(key)).isEqualTo(2);
		this.backends.play(policy, key, step(1_400_000, 0, true, 3, 0, 0));
		assertThat(this.backends.redis().hasKey(key)).isFalse();
	}

	@Test
	void requestsOfTheSameMicrosecondAreKeptApart() {
		RateLimitPolicy policy = window(Algorithm.SLIDING_WINDOW_LOG, 100, "1s");
		String key = key(policy);
		for (int i = 0; i < 100; i++) {
			Decision decision = this.backends.decideAt(0, policy, key, 1);
			assertThat(decision.allowed()).isTrue();
			assertThat(decision.remaining()).isEqualTo(99 - i);
		}
		assertThat(this.backends.decideAt(0, policy, key, 1).allowed()).isFalse();
		Set<String> members = this.backends.redis().opsForZSet().range(key, 0, -1);
		// 100 entries and the running sum.
		assertThat(members).hasSize(101).contains("s");
		assertThat(this.backends.redis().opsForZSet().score(key, "s")).isEqualTo(-100.0);
		List<String> expected = new ArrayList<>();
		for (int i = 0; i < 100; i++) {
			expected.add(BackendComparison.START_MICROS + ":" + i + ":1");
		}
		assertThat(members).containsAll(expected);
	}

	@Test
	void refundedEntryOfTheSameMicrosecondNeverLeavesTwoEntriesOneMember() {
		// The scripts themselves: a refund between two decisions of the same
		// microsecond, as a concurrent caller of another slot can cause.
		RedisScript<List<Object>> decide = LuaScripts.decide().eval();
		RedisScript<List<Object>> refund = LuaScripts.refund().eval();
		StringRedisTemplate redis = this.backends.redis();
		String key = "rl:log:{user-42}";
		String now = Long.toString(BackendComparison.START_MICROS);
		Object[] decideOne = { now, "1", "sl", "10", "1000000", "0", "1", "0" };
		String first = (String) redis.execute(decide, List.of(key), decideOne).get(5);
		String second = (String) redis.execute(decide, List.of(key), decideOne).get(5);
		assertThat(redis.execute(refund, List.of(key), now, "sl", "10", "1000000", "0", "1", "0", first))
			.containsExactly(1L, 9L, 1_000_000L, 0L, 0L, "");
		// One entry left at this microsecond, yet number 1 is taken: the next is number 2.
		String third = (String) redis.execute(decide, List.of(key), decideOne).get(5);
		assertThat(List.of(first, second, third)).containsExactly(now + ":0:1", now + ":1:1", now + ":2:1");
		assertThat(redis.opsForZSet().range(key, 0, -1)).containsExactlyInAnyOrder("s", second, third);
		assertThat(redis.opsForZSet().score(key, "s")).isEqualTo(-2.0);
		// A receipt refunded twice gives back nothing the second time.
		redis.execute(refund, List.of(key), now, "sl", "10", "1000000", "0", "1", "0", first);
		assertThat(redis.opsForZSet().score(key, "s")).isEqualTo(-2.0);
	}

	@Test
	void entriesOfEveryCostLeaveOneByOne() {
		RateLimitPolicy policy = window(Algorithm.SLIDING_WINDOW_LOG, 10, "1s");
		String key = key(policy);
		this.backends.play(policy, key,
				step(0,         4,  true,  6, 0,         1_000_000),
				step(0,         4,  true,  2, 0,         1_000_000),
				step(500_000,   2,  true,  0, 0,         1_000_000),
				// Seven units: once both entries of 0 leave, not just the first.
				step(600_000,   7,  false, 0, 400_000,   900_000),
				step(1_000_000, 9,  false, 8, 500_000,   500_000),
				step(1_500_000, 10, true,  0, 0,         1_000_000));
	}

	@Test
	void expiredKeyStartsEmpty() {
		RateLimitPolicy policy = window(Algorithm.SLIDING_WINDOW_LOG, 2, "1s");
		String key = key(policy);
		this.backends.play(policy, key, step(0, 2, true, 0, 0, 1_000_000));
		this.backends.expire(key);
		this.backends.play(policy, key,
				step(1_000_000, 2, true,  0, 0,         1_000_000),
				step(1_000_000, 1, false, 0, 1_000_000, 1_000_000));
	}

}
