package dev.ratelimit.redis;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.StringRedisTemplate;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Refill;
import dev.ratelimit.support.ManualTimeSource;

import static dev.ratelimit.redis.BackendComparison.Step.step;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Replays timelines of (time, cost) against {@code token_bucket.lua} on a real
 * Redis and against the in-memory backend, asserting that both make the
 * expected decision at every step.
 */
class TokenBucketScriptTests extends SharedRedisTests {

	private static final long SECOND = 1_000_000L;

	private static final long DAY = 86_400L * SECOND;

	private final LimitKeys keys = new LimitKeys("rl", 128);

	private BackendComparison backends;

	@BeforeEach
	void setUp() {
		this.backends = new BackendComparison(connectionFactory);
	}

	@Test
	void twoPerSecondWithCapacityTwoFollowsTheReferenceTimeline() {
		RateLimitPolicy policy = policy(2, "2/1s");
		this.backends.play(policy, key(policy),
				//   at µs       cost allowed remaining retryAfter resetAfter
				step(0,          1,   true,   1,        0,         500_000),
				step(0,          1,   true,   0,        0,         1_000_000),
				step(500_000,    1,   true,   0,        0,         1_000_000),
				step(750_000,    1,   false,  0,        250_000,   750_000),
				step(1_000_000,  1,   true,   0,        0,         1_000_000),
				step(2_000_000,  1,   true,   1,        0,         500_000),
				step(2_500_000,  0,   true,   2,        0,         0));
	}

	@Test
	void refillAfterLongIdleStopsAtCapacity() {
		RateLimitPolicy policy = policy(5, "1/1s");
		long hour = 3_600L * SECOND;
		this.backends.play(policy, key(policy),
				step(0,    5, true,  0, 0,         5_000_000),
				step(hour, 1, true,  4, 0,         1_000_000),
				step(hour, 5, false, 4, 1_000_000, 1_000_000),
				step(hour, 4, true,  0, 0,         5_000_000));
	}

	@Test
	void costAboveOneTakesSeveralTokensAndWaitsForAllOfThem() {
		RateLimitPolicy policy = policy(10, "5/1s");
		this.backends.play(policy, key(policy),
				step(0,         4,  true,  6, 0,         800_000),
				step(0,         7,  false, 6, 200_000,   800_000),
				step(200_000,   7,  true,  0, 0,         2_000_000),
				step(300_000,   0,  true,  0, 0,         1_900_000),
				step(2_200_000, 10, true,  0, 0,         2_000_000),
				step(2_200_000, 10, false, 0, 2_000_000, 2_000_000));
	}

	@Test
	void decisionsKeepMicrosecondPrecision() {
		RateLimitPolicy policy = policy(1_000, "1000/1s");
		this.backends.play(policy, key(policy),
				step(0,     1_000, true,  0, 0,   1_000_000),
				step(999,   1,     false, 0, 1,   999_001),
				step(1_000, 1,     true,  0, 0,   1_000_000),
				step(1_001, 1,     false, 0, 999, 999_999));
	}

	@Test
	void verySlowRateCountsInDays() {
		RateLimitPolicy policy = policy(3, "1/1d");
		this.backends.play(policy, key(policy),
				step(0,       1, true,  2, 0,       DAY),
				step(0,       2, true,  0, 0,       3 * DAY),
				step(0,       1, false, 0, DAY,     3 * DAY),
				step(DAY / 2, 1, false, 0, DAY / 2, 5 * DAY / 2),
				step(DAY,     1, true,  0, 0,       3 * DAY),
				step(4 * DAY, 3, true,  0, 0,       3 * DAY));
	}

	@Test
	void valuesNearTwoToTheFiftyStayExact() {
		// 3 tokens per 7us, capacity x period just below 2^50.
		RateLimitPolicy policy = RateLimitPolicy.builder("huge")
			.capacity(160_000_000_000_000L)
			.refill(new Refill(3, 7))
			.build();
		this.backends.play(policy, key(policy),
				step(0, 99_999_999_999_999L, true,  60_000_000_000_001L, 0, 233_333_333_333_331L),
				step(1, 60_000_000_000_002L, false, 60_000_000_000_001L, 2, 233_333_333_333_330L),
				step(3, 60_000_000_000_001L, true,  1,                   0, 373_333_333_333_331L));
	}

	@Test
	void threePerSecondAgreesOverALongRandomTimeline() {
		// Steps of 250 ms refill three quarters of a token: never a whole number.
		agreeOnRandomTimeline(policy(5, "3/1s"), 250_000, 20260101L);
	}

	@Test
	void sevenPerTenSecondsAgreesOverALongRandomTimeline() {
		// Steps of 1 s refill 0.7 tokens; a token takes 1,428,571.43 us.
		agreeOnRandomTimeline(policy(4, "7/10s"), SECOND, 42L);
	}

	@Test
	void fullBucketLeavesNoKey() {
		RateLimitPolicy policy = policy(2, "2/1s");
		String key = key(policy);
		// The comparison asserts after every step that a full bucket leaves no key.
		this.backends.play(policy, key,
				step(0,       0, true, 2, 0, 0),
				step(0,       1, true, 1, 0, 500_000),
				step(500_000, 0, true, 2, 0, 0));
		assertThat(this.backends.storedNumbers(key)).isNull();
	}

	@Test
	void keyExpiresWhenTheBucketWouldBeFullAgain() {
		RateLimitPolicy policy = policy(1, "3/1s");
		String key = key(policy);
		ManualTimeSource clock = new ManualTimeSource(BackendComparison.START_MICROS);
		RedisRateLimitBackend backend = new RedisRateLimitBackend(connectionFactory, clock);
		long startNanos = System.nanoTime();
		Decision decision = backend.tryConsume(policy, key, 1);
		assertThat(decision).isEqualTo(new Decision(true, 0, 1, 333_334, 0));
		// 333,334 us rounds up to 334 ms: once expired, the bucket is full, never earlier.
		Long ttl = new StringRedisTemplate(connectionFactory).getExpire(key, TimeUnit.MILLISECONDS);
		long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos) + 1;
		assertThat(ttl).isBetween(334L - elapsedMillis, 334L);
	}

	@Test
	void expiredKeyStartsFull() {
		RateLimitPolicy policy = policy(2, "2/1s");
		String key = key(policy);
		this.backends.play(policy, key, step(0, 2, true, 0, 0, 1_000_000));
		// The TTL of 1,000 ms fires; the in-memory backend drops its bucket at the same moment.
		this.backends.expire(key);
		this.backends.play(policy, key,
				step(1_000_000, 1, true, 1, 0, 500_000),
				step(1_000_000, 1, true, 0, 0, 1_000_000),
				step(1_000_000, 1, false, 0, 500_000, 1_000_000));
	}

	@Test
	void stateIsStoredAsExactIntegers() {
		// capacity x period = 13,000 days in us: 1.1232e15, just below 2^50.
		RateLimitPolicy policy = policy(13_000, "1/1d");
		String key = key(policy);
		this.backends.play(policy, key, step(123_457, 1, true, 12_999, 0, DAY));
		assertThat(this.backends.storedNumbers(key))
			.containsExactly("1123113600000000", Long.toString(BackendComparison.START_MICROS + 123_457));
	}

	@Test
	void serverTimeModeDecidesWithTheRedisClock() {
		// Slow enough that no pause of the test run can refill a token.
		RateLimitPolicy policy = policy(2, "2/1h");
		long halfHour = 1_800L * SECOND;
		String key = key(policy);
		RedisRateLimitBackend backend = new RedisRateLimitBackend(connectionFactory);
		long before = System.currentTimeMillis() * 1_000L;
		assertThat(backend.tryConsume(policy, key, 1)).isEqualTo(new Decision(true, 1, 2, halfHour, 0));
		Decision second = backend.tryConsume(policy, key, 1);
		Decision third = backend.tryConsume(policy, key, 1);
		assertThat(second.allowed()).isTrue();
		assertThat(second.remaining()).isZero();
		assertThat(second.resetAfterMicros()).isBetween(halfHour + 1, 2 * halfHour);
		assertThat(third.allowed()).isFalse();
		assertThat(third.retryAfterMicros()).isBetween(1L, halfHour);
		assertThat(third.resetAfterMicros()).isBetween(halfHour + 1, second.resetAfterMicros());
		long storedMicros = Long.parseLong(this.backends.storedNumbers(key).get(1));
		// Server and test share a host: the script's TIME is close to ours.
		assertThat(storedMicros).isBetween(before - 60 * SECOND, before + 60 * SECOND);
		Long ttl = new StringRedisTemplate(connectionFactory).getExpire(key, TimeUnit.MILLISECONDS);
		assertThat(ttl).isBetween(3_500_000L, 3_600_000L);
	}

	private void agreeOnRandomTimeline(RateLimitPolicy policy, long stepMicros, long seed) {
		// Times on a grid keep every TTL far above the time one step takes, see BackendComparison.
		int allowed = this.backends.playRandom(policy, key(policy), stepMicros, 500, seed);
		assertThat(allowed).as("allowed").isBetween(50, 475);
	}

	private String key(RateLimitPolicy policy) {
		return this.keys.build(policy.name(), "user-42");
	}

	private static RateLimitPolicy policy(long capacity, String refill) {
		return RateLimitPolicy.builder("script").capacity(capacity).refill(refill).build();
	}

}
