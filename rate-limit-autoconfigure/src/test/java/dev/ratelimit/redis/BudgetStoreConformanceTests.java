package dev.ratelimit.redis;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnectionFactory;

import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.core.LimitKeys;

import static dev.ratelimit.redis.BudgetComparison.one;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Budget timelines on explicit times, run against the in-memory store and the
 * Redis store (see {@link BudgetComparison}): both agree with
 * {@link dev.ratelimit.budget.BudgetState} decision by decision, and the
 * expectations spelled out here say what that decision is.
 */
class BudgetStoreConformanceTests extends SharedRedisTests {

	static final long UNIT = 1_000_000L;

	static final long CENT = UNIT / 100;

	static final long SECOND = 1_000_000L;

	static final long MINUTE = 60 * SECOND;

	static final long HOUR = 60 * MINUTE;

	/** 2026-01-01T10:00:00Z: fourteen hours before the UTC day ends. */
	static final Instant MORNING = Instant.parse("2026-01-01T10:00:00Z");

	private final LimitKeys keys = new LimitKeys("rl", 128);

	@Test
	void settleRefundsAnActualBelowTheEstimateAndChargesOneAboveIt() {
		BudgetPolicy policy = budget("day", "5.00", Duration.ofMinutes(5));
		BudgetComparison budgets = comparison(MORNING);
		String key = key(policy);

		assertThat(budgets.reserve(policy, key, "a", 100 * CENT)).isEqualTo(one(true, 0, 100 * CENT, 400 * CENT,
				14 * HOUR, 0));
		budgets.advance(Duration.ofSeconds(1));
		assertThat(budgets.settle(policy, key, "a", 40 * CENT)).isEqualTo(one(true, 40 * CENT, 0, 460 * CENT,
				14 * HOUR - SECOND, 0));
		budgets.advance(Duration.ofSeconds(1));
		assertThat(budgets.reserve(policy, key, "b", 50 * CENT)).isEqualTo(one(true, 40 * CENT, 50 * CENT,
				410 * CENT, 14 * HOUR - 2 * SECOND, 0));
		budgets.advance(Duration.ofSeconds(1));
		assertThat(budgets.settle(policy, key, "b", 80 * CENT)).isEqualTo(one(true, 120 * CENT, 0, 380 * CENT,
				14 * HOUR - 3 * SECOND, 0));
	}

	@Test
	void reservationThatDoesNotFitIsRefusedUntilTheOldestLeaseOrTheWindowEnds() {
		BudgetPolicy policy = budget("day", "1.00", Duration.ofMinutes(5));
		BudgetComparison budgets = comparison(MORNING);
		String key = key(policy);

		budgets.reserve(policy, key, "a", 60 * CENT);
		budgets.advance(Duration.ofSeconds(10));
		// Spent alone leaves room: the reservation a could settle low or expire.
		assertThat(budgets.reserve(policy, key, "b", 50 * CENT)).isEqualTo(one(false, 0, 60 * CENT, 40 * CENT,
				14 * HOUR - 10 * SECOND, 5 * MINUTE - 10 * SECOND));
		budgets.advance(Duration.ofSeconds(10));
		budgets.settle(policy, key, "a", 60 * CENT);
		budgets.advance(Duration.ofSeconds(10));
		// Spent alone leaves no room: only the next day has.
		assertThat(budgets.reserve(policy, key, "b", 50 * CENT)).isEqualTo(one(false, 60 * CENT, 0, 40 * CENT,
				14 * HOUR - 30 * SECOND, 14 * HOUR - 30 * SECOND));
		assertThat(budgets.reserve(policy, key, "c", 40 * CENT)).isEqualTo(one(true, 60 * CENT, 40 * CENT, 0,
				14 * HOUR - 30 * SECOND, 0));
		budgets.moveTo(Instant.parse("2026-01-02T00:00:00Z"));
		assertThat(budgets.reserve(policy, key, "b", 50 * CENT)).isEqualTo(one(true, 0, 50 * CENT, 50 * CENT,
				24 * HOUR, 0));
	}

	@Test
	void monthlyAmountRefusesWhileTheDailyOneHasRoom() {
		BudgetPolicy policy = BudgetPolicy.builder("tenant")
			.limit("day", "5.00")
			.limit("month", "6.00")
			.reservationTimeout(Duration.ofMinutes(5))
			.build();
		BudgetComparison budgets = comparison(Instant.parse("2026-01-30T12:00:00Z"));
		String key = key(policy);
		budgets.reserve(policy, key, "a", 4 * UNIT);
		budgets.settle(policy, key, "a", 4 * UNIT);

		budgets.moveTo(Instant.parse("2026-01-31T12:00:00Z"));
		assertThat(budgets.reserve(policy, key, "b", 3 * UNIT))
			.isEqualTo(new BudgetDecision(false, new long[] { 0, 4 * UNIT }, 0, new long[] { 5 * UNIT, 2 * UNIT },
					new long[] { 12 * HOUR, 12 * HOUR }, new boolean[] { false, true }, 12 * HOUR));
		assertThat(budgets.reserve(policy, key, "c", 2 * UNIT).allowed()).isTrue();

		budgets.moveTo(Instant.parse("2026-02-01T00:00:00Z"));
		assertThat(budgets.reserve(policy, key, "b", 3 * UNIT))
			.isEqualTo(new BudgetDecision(true, new long[] { 0, 0 }, 3 * UNIT, new long[] { 2 * UNIT, 3 * UNIT },
					new long[] { 24 * HOUR, 28 * 24 * HOUR }, new boolean[] { false, false }, 0));
	}

	@Test
	void calendarDayInBerlinLasts23HoursInMarchAnd25HoursInOctober() {
		BudgetPolicy policy = BudgetPolicy.builder("tenant")
			.limit("day", "1.00")
			.zone(ZoneId.of("Europe/Berlin"))
			.reservationTimeout(Duration.ofMinutes(1))
			.build();
		String key = key(policy);
		// 00:30 on 2026-03-29 in Berlin (CET); the day ends at 24:00 CEST, 22:00Z.
		BudgetComparison budgets = comparison(Instant.parse("2026-03-28T23:30:00Z"));
		budgets.reserve(policy, key, "spring", 50 * CENT);
		assertThat(budgets.settle(policy, key, "spring", 50 * CENT).resetAfterMicros())
			.containsExactly(22 * HOUR + 30 * MINUTE);
		budgets.moveTo(Instant.parse("2026-03-29T21:59:59Z"));
		assertThat(budgets.peek(policy, key)).isEqualTo(one(true, 50 * CENT, 0, 50 * CENT, SECOND, 0));
		budgets.moveTo(Instant.parse("2026-03-29T22:00:00Z"));
		assertThat(budgets.peek(policy, key)).isEqualTo(one(true, 0, 0, UNIT, 24 * HOUR, 0));

		// 00:30 on 2026-10-25 in Berlin (CEST); the day ends at 24:00 CET, 23:00Z.
		budgets.moveTo(Instant.parse("2026-10-24T22:30:00Z"));
		budgets.reserve(policy, key, "autumn", 50 * CENT);
		assertThat(budgets.settle(policy, key, "autumn", 50 * CENT).resetAfterMicros())
			.containsExactly(24 * HOUR + 30 * MINUTE);
		budgets.moveTo(Instant.parse("2026-10-25T22:59:59Z"));
		assertThat(budgets.peek(policy, key)).isEqualTo(one(true, 50 * CENT, 0, 50 * CENT, SECOND, 0));
		budgets.moveTo(Instant.parse("2026-10-25T23:00:00Z"));
		assertThat(budgets.peek(policy, key)).isEqualTo(one(true, 0, 0, UNIT, 24 * HOUR, 0));
	}

	@Test
	void rollingWindowEndsOneLengthAfterItsFirstCharge() {
		BudgetPolicy policy = budget("1h", "1.00", Duration.ofMinutes(5));
		BudgetComparison budgets = comparison(MORNING);
		String key = key(policy);

		assertThat(budgets.peek(policy, key)).isEqualTo(one(true, 0, 0, UNIT, 0, 0));
		assertThat(budgets.reserve(policy, key, "a", 50 * CENT)).isEqualTo(one(true, 0, 50 * CENT, 50 * CENT, HOUR,
				0));
		// Settled after its 5-minute lease: the window the reservation started must outlive the lease.
		budgets.advance(Duration.ofMinutes(10));
		budgets.settle(policy, key, "a", 50 * CENT);
		budgets.advance(Duration.ofMinutes(20));
		assertThat(budgets.reserve(policy, key, "b", 60 * CENT)).isEqualTo(one(false, 50 * CENT, 0, 50 * CENT,
				30 * MINUTE, 30 * MINUTE));
		budgets.advance(Duration.ofMinutes(30));
		assertThat(budgets.reserve(policy, key, "b", 60 * CENT)).isEqualTo(one(true, 0, 60 * CENT, 40 * CENT, HOUR,
				0));
	}

	@Test
	void rollingWindowStartedByAReleasedReservationStillEndsOneLengthLater() {
		BudgetPolicy policy = budget("1h", "1.00", Duration.ofMinutes(1));
		BudgetComparison budgets = comparison(MORNING);
		String key = key(policy);

		budgets.reserve(policy, key, "a", 50 * CENT);
		budgets.advance(Duration.ofSeconds(1));
		budgets.release(policy, key, "a");
		// Past the released id's marker: what is left is the window that started at MORNING.
		budgets.advance(Duration.ofMinutes(10));
		assertThat(budgets.peek(policy, key)).isEqualTo(one(true, 0, 0, UNIT, 50 * MINUTE - SECOND, 0));
		budgets.reserve(policy, key, "b", 80 * CENT);
		budgets.settle(policy, key, "b", 80 * CENT);
		budgets.advance(Duration.ofMinutes(50));
		assertThat(budgets.peek(policy, key)).isEqualTo(one(true, 0, 0, UNIT, 0, 0));
	}

	@Test
	void expiredLeaseReturnsItsAmount() {
		BudgetPolicy policy = budget("day", "1.00", Duration.ofMinutes(1));
		BudgetComparison budgets = comparison(MORNING);
		String key = key(policy);

		budgets.reserve(policy, key, "a", 80 * CENT);
		budgets.advance(Duration.ofSeconds(30));
		assertThat(budgets.reserve(policy, key, "b", 50 * CENT)).isEqualTo(one(false, 0, 80 * CENT, 20 * CENT,
				14 * HOUR - 30 * SECOND, 30 * SECOND));
		budgets.advance(Duration.ofSeconds(30));
		assertThat(budgets.reserve(policy, key, "b", 50 * CENT)).isEqualTo(one(true, 0, 50 * CENT, 50 * CENT,
				14 * HOUR - MINUTE, 0));
	}

	@Test
	void settlingTwiceChargesOnceAndReleasingTwiceReturnsOnce() {
		BudgetPolicy policy = budget("day", "5.00", Duration.ofMinutes(5));
		BudgetComparison budgets = comparison(MORNING);
		String key = key(policy);

		budgets.reserve(policy, key, "a", UNIT);
		BudgetDecision settled = budgets.settle(policy, key, "a", 30 * CENT);
		assertThat(budgets.settle(policy, key, "a", 30 * CENT)).isEqualTo(settled);
		assertThat(budgets.release(policy, key, "a")).isEqualTo(settled);

		budgets.reserve(policy, key, "b", UNIT);
		BudgetDecision released = budgets.release(policy, key, "b");
		assertThat(released).isEqualTo(settled);
		assertThat(budgets.release(policy, key, "b")).isEqualTo(settled);
		assertThat(budgets.settle(policy, key, "b", 40 * CENT)).isEqualTo(settled);
		// Reserving a finished id again (a retried request) holds nothing.
		assertThat(budgets.reserve(policy, key, "a", 2 * UNIT)).isEqualTo(settled);
		assertThat(budgets.peek(policy, key)).isEqualTo(one(true, 30 * CENT, 0, 470 * CENT, 14 * HOUR, 0));
	}

	@Test
	void extendGrowsALiveReservationWhileTheBudgetHasRoomAndRenewsItsLease() {
		BudgetPolicy policy = budget("day", "1.00", Duration.ofMinutes(5));
		BudgetComparison budgets = comparison(MORNING);
		String key = key(policy);

		budgets.reserve(policy, key, "stream", 40 * CENT);
		budgets.reserve(policy, key, "other", 30 * CENT);
		budgets.advance(Duration.ofMinutes(4));
		assertThat(budgets.extend(policy, key, "stream", 20 * CENT)).isEqualTo(one(true, 0, 90 * CENT, 10 * CENT,
				14 * HOUR - 4 * MINUTE, 0));
		// 11 cents more would pass the amount: refused, nothing changes.
		assertThat(budgets.extend(policy, key, "stream", 11 * CENT)).isEqualTo(one(false, 0, 90 * CENT, 10 * CENT,
				14 * HOUR - 4 * MINUTE, 0));
		assertThat(budgets.extend(policy, key, "stream", 10 * CENT).allowed()).isTrue();
		// Renewed at 4 minutes: the other lease expires at 5, this one lives on to 9.
		budgets.advance(Duration.ofMinutes(2));
		assertThat(budgets.peek(policy, key).reservedMicros()).isEqualTo(70 * CENT);
		assertThat(budgets.settle(policy, key, "stream", 65 * CENT)).isEqualTo(one(true, 65 * CENT, 0, 35 * CENT,
				14 * HOUR - 6 * MINUTE, 0));
	}

	@Test
	void extendRefusesAReservationThatIsNoLongerLive() {
		BudgetPolicy policy = budget("day", "1.00", Duration.ofMinutes(5));
		BudgetComparison budgets = comparison(MORNING);
		String key = key(policy);

		budgets.reserve(policy, key, "settled", 10 * CENT);
		budgets.settle(policy, key, "settled", 5 * CENT);
		assertThat(budgets.extend(policy, key, "settled", CENT).allowed()).isFalse();
		budgets.reserve(policy, key, "lapsed", 10 * CENT);
		budgets.advance(Duration.ofMinutes(5));
		assertThat(budgets.extend(policy, key, "lapsed", CENT).allowed()).isFalse();
		assertThat(budgets.extend(policy, key, "unknown", 0).allowed()).isFalse();
		assertThat(budgets.peek(policy, key).reservedMicros()).isZero();
	}

	@Test
	void settleAfterTheLeaseExpiredChargesTheActualCost() {
		BudgetPolicy policy = budget("day", "5.00", Duration.ofMinutes(1));
		BudgetComparison budgets = comparison(MORNING);
		String key = key(policy);

		budgets.reserve(policy, key, "a", UNIT);
		budgets.advance(Duration.ofMinutes(2));
		assertThat(budgets.peek(policy, key).reservedMicros()).isZero();
		assertThat(budgets.settle(policy, key, "a", 70 * CENT)).isEqualTo(one(true, 70 * CENT, 0, 430 * CENT,
				14 * HOUR - 2 * MINUTE, 0));
		budgets.advance(Duration.ofSeconds(1));
		assertThat(budgets.settle(policy, key, "a", 70 * CENT).spentMicros()).containsExactly(70 * CENT);
	}

	@Test
	void longRandomSequenceAcrossTheOctoberDaylightSavingChangeAgrees() {
		BudgetPolicy policy = BudgetPolicy.builder("tenant")
			.limit("day", "50.00")
			.limit("30m", "2.00")
			.zone(ZoneId.of("Europe/Berlin"))
			.reservationTimeout(Duration.ofMinutes(2))
			.build();
		// Two hours before midnight in Berlin, the night before the 25-hour day.
		BudgetComparison budgets = comparison(Instant.parse("2026-10-24T20:00:00Z"));
		int[] outcomes = playRandom(budgets, policy, key(policy), 3000, 20261025L);
		assertThat(budgets.now()).as("crossed both midnights of the long day")
			.isGreaterThan(BudgetComparison.micros(Instant.parse("2026-10-25T23:00:00Z")));
		assertThat(IntStream.of(outcomes).boxed().toList()).as("admitted, refused, refused by the day, refused by the rolling window")
			.allMatch((count) -> count > 50);
	}

	@Test
	void longRandomSequenceAcrossAWeekAndMonthEndInNewYorkAgrees() {
		BudgetPolicy policy = BudgetPolicy.builder("tenant")
			.limit("week", "60.00")
			.limit("month", "80.00")
			.zone(ZoneId.of("America/New_York"))
			.reservationTimeout(Duration.ofSeconds(30))
			.build();
		// Four hours before November: its first day is 25 hours long, the week ends the day after.
		BudgetComparison budgets = comparison(Instant.parse("2026-11-01T00:00:00Z"));
		int[] outcomes = playRandom(budgets, policy, key(policy), 3000, 20261101L);
		assertThat(budgets.now()).as("crossed the month and the week")
			.isGreaterThan(BudgetComparison.micros(Instant.parse("2026-11-02T05:00:00Z")));
		assertThat(IntStream.of(outcomes).boxed().toList()).as("admitted, refused, refused by the week, refused by the month")
			.allMatch((count) -> count > 50);
	}

	/**
	 * Plays seeded random operations on one key, times on whole seconds: mostly
	 * reservations and settles of admitted ones near their estimates, with
	 * retried settles and releases, settles of unknown ids, peeks, and now and
	 * then a long pause.
	 * @return the numbers of admitted and of refused reservations, then of
	 * refusals by each limit
	 */
	static int[] playRandom(BudgetComparison budgets, BudgetPolicy policy, String key, int steps, long seed) {
		Random random = new Random(seed);
		List<String> admittedIds = new ArrayList<>();
		int[] outcomes = new int[2 + policy.limits().size()];
		for (int step = 0; step < steps; step++) {
			long pause = (random.nextInt(50) == 0) ? random.nextInt(3600) : random.nextInt(90);
			budgets.advance(Duration.ofSeconds(pause));
			int choice = random.nextInt(100);
			if (choice < 40 || admittedIds.isEmpty()) {
				String id = "r" + step;
				BudgetDecision decision = budgets.reserve(policy, key, id, random.nextInt(40) * CENT);
				if (decision.allowed()) {
					admittedIds.add(id);
				}
				outcomes[decision.allowed() ? 0 : 1]++;
				for (int i = 0; i < decision.violated().length; i++) {
					outcomes[2 + i] += decision.violated()[i] ? 1 : 0;
				}
			}
			else if (choice < 70) {
				// Recent ids mostly, so that most settles find their lease; old ones are retries.
				int back = random.nextInt(Math.min(admittedIds.size(), 6));
				budgets.settle(policy, key, admittedIds.get(admittedIds.size() - 1 - back), random.nextInt(45) * CENT);
			}
			else if (choice < 78) {
				// Streams growing their reservation, some long settled or expired.
				int back = random.nextInt(Math.min(admittedIds.size(), 6));
				budgets.extend(policy, key, admittedIds.get(admittedIds.size() - 1 - back), random.nextInt(20) * CENT);
			}
			else if (choice < 85) {
				budgets.release(policy, key, admittedIds.get(random.nextInt(admittedIds.size())));
			}
			else if (choice < 90) {
				budgets.settle(policy, key, "unknown" + step, random.nextInt(10) * CENT);
			}
			else {
				budgets.peek(policy, key);
			}
		}
		return outcomes;
	}

	/**
	 * Returns the factory the Redis store runs its script on: the limiter's own
	 * ({@code FCALL}) here, a plain one ({@code EVALSHA}) in
	 * {@link BudgetStoreEvalShaConformanceTests}.
	 * @return the connection factory
	 */
	RedisConnectionFactory scriptsFactory() {
		return connectionFactory;
	}

	private BudgetComparison comparison(Instant start) {
		return new BudgetComparison(scriptsFactory(), start);
	}

	private String key(BudgetPolicy policy) {
		return this.keys.build("budget:" + policy.name(), "tenant-1");
	}

	static BudgetPolicy budget(String window, String amount, Duration reservationTimeout) {
		return BudgetPolicy.builder("tenant").limit(window, amount).reservationTimeout(reservationTimeout).build();
	}

}
