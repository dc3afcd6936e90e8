package dev.ratelimit.redis;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.StringRedisTemplate;

import dev.ratelimit.budget.Amounts;
import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.BudgetWindow;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.support.ManualTimeSource;

import static dev.ratelimit.redis.BudgetStoreConformanceTests.CENT;
import static dev.ratelimit.redis.BudgetStoreConformanceTests.HOUR;
import static dev.ratelimit.redis.BudgetStoreConformanceTests.MINUTE;
import static dev.ratelimit.redis.BudgetStoreConformanceTests.MORNING;
import static dev.ratelimit.redis.BudgetStoreConformanceTests.SECOND;
import static dev.ratelimit.redis.BudgetStoreConformanceTests.UNIT;
import static dev.ratelimit.redis.BudgetStoreConformanceTests.budget;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/**
 * What {@link RedisBudgetStore} leaves in Redis: every key expires when the
 * state can be forgotten (the end of the lease, the marker or the window with
 * spend), a state as good as fresh leaves no key, and the script itself picks
 * the calendar window, reads the server's clock and refuses bad input before
 * writing.
 */
class RedisBudgetStoreTests extends SharedRedisTests {

	private final ManualTimeSource clock = new ManualTimeSource(BudgetComparison.micros(MORNING));

	private final String key = new LimitKeys("rl", 128).build("budget:tenant", "tenant-1");

	private RedisBudgetStore store;

	private StringRedisTemplate redis;

	@BeforeEach
	void setUp() {
		this.store = new RedisBudgetStore(connectionFactory, this.clock);
		this.redis = new StringRedisTemplate(connectionFactory);
	}

	@Test
	void reservationKeepsItsKeysUntilItsLeaseEnds() {
		BudgetPolicy policy = budget("day", "5.00", Duration.ofMinutes(5));
		long startNanos = System.nanoTime();
		this.store.reserve(policy, this.key, "a", UNIT);

		assertTtl(this.key, 5 * MINUTE, startNanos);
		assertTtl(this.key + ":l", 5 * MINUTE, startNanos);
		assertThat(this.redis.hasKey(this.key + ":d")).isFalse();
		assertThat(this.redis.opsForHash().get(this.key, "a:a")).isEqualTo(Long.toString(UNIT));
	}

	@Test
	void spendKeepsTheKeysUntilTheWindowEnds() {
		BudgetPolicy policy = budget("day", "5.00", Duration.ofMinutes(5));
		this.store.reserve(policy, this.key, "a", UNIT);
		this.clock.advance(Duration.ofSeconds(1));
		long startNanos = System.nanoTime();
		this.store.settle(policy, this.key, "a", 40 * CENT);

		assertTtl(this.key, 14 * HOUR - SECOND, startNanos);
		assertTtl(this.key + ":d", 14 * HOUR - SECOND, startNanos);
		assertThat(this.redis.hasKey(this.key + ":l")).as("no live lease").isFalse();
		assertThat(this.redis.opsForHash().entries(this.key)).doesNotContainKey("a:a");
	}

	@Test
	void releasedReservationKeepsOnlyItsMarkerForOneLease() {
		BudgetPolicy policy = budget("day", "5.00", Duration.ofMinutes(5));
		this.store.reserve(policy, this.key, "a", UNIT);
		this.clock.advance(Duration.ofSeconds(1));
		long startNanos = System.nanoTime();
		this.store.release(policy, this.key, "a");

		assertTtl(this.key, 5 * MINUTE, startNanos);
		assertTtl(this.key + ":d", 5 * MINUTE, startNanos);
		assertThat(this.redis.hasKey(this.key + ":l")).isFalse();
	}

	@Test
	void startedRollingWindowKeepsTheKeysUntilItEndsEvenWithNothingSpent() {
		BudgetPolicy policy = budget("1h", "1.00", Duration.ofMinutes(1));
		this.store.reserve(policy, this.key, "a", 50 * CENT);
		this.clock.advance(Duration.ofSeconds(1));
		long startNanos = System.nanoTime();
		this.store.release(policy, this.key, "a");

		assertTtl(this.key, HOUR - SECOND, startNanos);
		assertTtl(this.key + ":d", HOUR - SECOND, startNanos);
	}

	@Test
	void stateAsGoodAsFreshLeavesNoKeys() {
		BudgetPolicy policy = budget("day", "5.00", Duration.ofMinutes(5));
		assertThat(this.store.peek(policy, this.key).remainingMicros()).containsExactly(5 * UNIT);
		assertNoKeys();

		this.store.reserve(policy, this.key, "a", UNIT);
		this.store.settle(policy, this.key, "a", 0);
		this.store.reserve(policy, this.key, "b", UNIT);
		// Redis' own TTLs are minutes away: the explicit time alone expires the lease and the marker.
		this.clock.advance(Duration.ofMinutes(5));
		BudgetDecision decision = this.store.peek(policy, this.key);

		assertThat(decision.reservedMicros()).isZero();
		assertThat(decision.spentMicros()).containsExactly(0);
		assertNoKeys();
	}

	@Test
	void scriptMovesToTheWindowAfterTheCallersSpanOnceNowHasPassedItsEnd() {
		long start = BudgetComparison.micros(Instant.parse("2026-01-01T00:00:00Z"));
		long end = start + 24 * HOUR;
		long nextEnd = end + 24 * HOUR;
		// The server's clock is past the span Java computed from its own.
		List<Object> reply = reserve(end + 5 * SECOND, "a", UNIT, start, end, nextEnd);
		assertThat(reply).containsExactly(1L, UNIT, 0L, 0L, 4 * UNIT, 24 * HOUR - 5 * SECOND, 0L);
		this.redis.execute(LuaScripts.budget().eval(), RedisBudgetStore.redisKeys(this.key), "settle",
				Long.toString(end + 6 * SECOND), "a", Long.toString(UNIT), Long.toString(5 * MINUTE), "c",
				Long.toString(5 * UNIT), Long.toString(start), Long.toString(end), Long.toString(nextEnd));

		// A clock behind the window already entered never moves it back or wipes its spend.
		reply = reserve(end - 5 * SECOND, "b", UNIT, start, end, nextEnd);
		assertThat(reply).containsExactly(1L, UNIT, 0L, UNIT, 3 * UNIT, 24 * HOUR + 5 * SECOND, 0L);
	}

	@Test
	void serverClockPlacesLeasesAndRollingWindowsWithoutAnExplicitClock() {
		RedisBudgetStore serverTime = new RedisBudgetStore(connectionFactory);
		BudgetPolicy policy = budget("1h", "1.00", Duration.ofMinutes(5));
		long before = System.currentTimeMillis() * 1_000L;
		BudgetDecision decision = serverTime.reserve(policy, this.key, "a", 50 * CENT);

		assertThat(decision.resetAfterMicros()).containsExactly(HOUR);
		Double leaseExpiry = this.redis.opsForZSet().score(this.key + ":l", "a");
		assertThat(leaseExpiry).isNotNull();
		// The redis-server runs on this machine: its TIME is this clock.
		assertThat(leaseExpiry.longValue()).isCloseTo(before + 5 * MINUTE, within(5 * SECOND));
	}

	@Test
	void largestAmountsStayExactToTheMicroUnit() {
		BudgetPolicy policy = BudgetPolicy.builder("tenant")
			.limit(BudgetWindow.parse("month"), Amounts.MAX_MICROS)
			.limit(BudgetWindow.rolling(Duration.ofDays(3650)), Amounts.MAX_MICROS)
			.build();
		BudgetComparison budgets = new BudgetComparison(connectionFactory, MORNING);
		budgets.reserve(policy, this.key, "a", Amounts.MAX_MICROS - 1);
		budgets.settle(policy, this.key, "a", Amounts.MAX_MICROS - 1);
		assertThat(budgets.reserve(policy, this.key, "b", 1).remainingMicros()).containsExactly(0, 0);
		assertThat(budgets.reserve(policy, this.key, "c", 1).allowed()).isFalse();
		assertThat(budgets.settle(policy, this.key, "b", Amounts.MAX_MICROS).spentMicros())
			.containsExactly(2 * Amounts.MAX_MICROS - 1, 2 * Amounts.MAX_MICROS - 1);
	}

	@Test
	void amountsOutsideTheExactRangeAreRefusedBeforeReachingRedis() {
		BudgetPolicy policy = budget("day", "5.00", Duration.ofMinutes(5));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.store.settle(policy, this.key, "a", Amounts.MAX_MICROS + 1))
			.withMessageContaining("between 0 and");
		assertThatIllegalArgumentException().isThrownBy(() -> this.store.reserve(policy, this.key, "a", -1));
		assertNoKeys();
	}

	@Test
	void unknownOperationFailsBeforeWritingAnything() {
		BudgetPolicy policy = budget("day", "5.00", Duration.ofMinutes(5));
		this.store.reserve(policy, this.key, "a", UNIT);
		Map<Object, Object> before = this.redis.opsForHash().entries(this.key);
		// Far past the lease: a script that normalized before failing would have dropped it.
		long later = this.clock.currentTimeMicros() + HOUR;

		assertThatThrownBy(() -> this.redis.execute(LuaScripts.budget().eval(), RedisBudgetStore.redisKeys(this.key),
				"spend", Long.toString(later), "a", "1", "1", "r", "1", "1", "0", "0"))
			.rootCause()
			.hasMessageContaining("unknown budget operation: spend");
		assertThat(this.redis.opsForHash().entries(this.key)).isEqualTo(before);
		assertThat(this.redis.opsForZSet().score(this.key + ":l", "a")).isNotNull();
	}

	private List<Object> reserve(long now, String id, long estimate, long start, long end, long nextEnd) {
		return this.redis.execute(LuaScripts.budget().eval(), RedisBudgetStore.redisKeys(this.key), "reserve",
				Long.toString(now), id, Long.toString(estimate), Long.toString(5 * MINUTE), "c",
				Long.toString(5 * UNIT), Long.toString(start), Long.toString(end), Long.toString(nextEnd));
	}

	/** Redis counts down in real time from the moment the script ran. */
	private void assertTtl(String redisKey, long expectedMicros, long startNanos) {
		long expectedMillis = -Math.floorDiv(-expectedMicros, 1_000L);
		Long ttl = this.redis.getExpire(redisKey, TimeUnit.MILLISECONDS);
		long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos) + 1;
		assertThat(ttl).as("PTTL of %s", redisKey).isBetween(expectedMillis - elapsedMillis, expectedMillis);
	}

	private void assertNoKeys() {
		assertThat(this.redis.countExistingKeys(RedisBudgetStore.redisKeys(this.key))).isZero();
	}

}
