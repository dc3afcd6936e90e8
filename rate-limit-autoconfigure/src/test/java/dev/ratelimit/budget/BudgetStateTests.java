package dev.ratelimit.budget;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.FailureMode;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Budgets with an injected clock: reserve-then-settle, calendar windows across
 * midnight and daylight-saving changes, rolling windows, leases.
 */
class BudgetStateTests {

	private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

	private static final long HOUR = 3_600_000_000L;

	@Test
	void amountsAreParsedToMicroUnitsWithoutFloatingPoint() {
		assertThat(Amounts.parseMicros("5.00")).isEqualTo(5_000_000);
		assertThat(Amounts.parseMicros("2,000,000")).isEqualTo(2_000_000_000_000L);
		assertThat(Amounts.parseMicros("0.000002")).isEqualTo(2);
		assertThat(Amounts.parseMicros("0.1")).isEqualTo(100_000);
		assertThat(Amounts.toMicrosRoundingUp(0.1 + 0.2)).isEqualTo(300_001);
		assertThat(Amounts.toMicrosRoundingUp("0.0000001")).isEqualTo(1);
		assertThat(Amounts.format(4_250_000)).isEqualTo("4.250000");
		assertThatIllegalArgumentException().isThrownBy(() -> Amounts.parseMicros("0.0000001"))
			.withMessageContaining("six decimal places");
		assertThatIllegalArgumentException().isThrownBy(() -> Amounts.parseMicros("-1"))
			.withMessageContaining("negative");
		assertThatIllegalArgumentException().isThrownBy(() -> Amounts.toMicrosRoundingUp(Double.NaN))
			.withMessageContaining("not a number");
	}

	@Test
	void reservationIsSettledToTheActualCostRefundingTheDifference() {
		Fixture budget = new Fixture(BudgetPolicy.builder("b").unit("USD").limit("day", "1.00").build(),
				at(2026, 6, 1, 12, 0, ZoneId.of("UTC")));
		assertThat(budget.reserve("r1", 600_000).remainingMicros()).containsExactly(400_000);
		assertThat(budget.reserve("r2", 500_000).allowed()).isFalse();
		BudgetDecision settled = budget.settle("r1", 250_000);
		assertThat(settled.spentMicros()).containsExactly(250_000);
		assertThat(settled.reservedMicros()).isZero();
		assertThat(settled.remainingMicros()).containsExactly(750_000);
		assertThat(budget.reserve("r2", 500_000).allowed()).isTrue();
		// charging more than estimated is recorded: the money was spent
		assertThat(budget.settle("r2", 900_000).remainingMicros()).containsExactly(0);
		assertThat(budget.peek().spentMicros()).containsExactly(1_150_000);
	}

	@Test
	void settlingOrReleasingTwiceChargesOnce() {
		Fixture budget = new Fixture(BudgetPolicy.builder("b").limit("day", "1.00").build(),
				at(2026, 6, 1, 12, 0, ZoneId.of("UTC")));
		budget.reserve("r1", 300_000);
		budget.settle("r1", 200_000);
		budget.settle("r1", 200_000);
		budget.release("r1");
		assertThat(budget.peek().spentMicros()).containsExactly(200_000);
		budget.reserve("r2", 300_000);
		budget.release("r2");
		budget.release("r2");
		budget.settle("r2", 100_000);
		assertThat(budget.peek().spentMicros()).containsExactly(200_000);
		assertThat(budget.peek().reservedMicros()).isZero();
	}

	@Test
	void refusalWaitsForTheWindowWhenSpendIsTheProblemAndForTheOldestLeaseWhenReservationsAre() {
		Fixture budget = new Fixture(BudgetPolicy.builder("b").limit("day", "1.00").reservationTimeout(Duration.ofMinutes(5))
			.build(), at(2026, 6, 1, 22, 0, ZoneId.of("UTC")));
		budget.reserve("held", 800_000);
		BudgetDecision blocked = budget.reserve("other", 300_000);
		assertThat(blocked.allowed()).isFalse();
		assertThat(blocked.violated()).containsExactly(true);
		assertThat(blocked.retryAfterMicros()).isEqualTo(5 * 60_000_000L);
		budget.settle("held", 800_000);
		assertThat(budget.reserve("other", 300_000).retryAfterMicros()).isEqualTo(2 * HOUR);
	}

	@Test
	void calendarDayRollsOverAtMidnightInTheZone() {
		Fixture budget = new Fixture(BudgetPolicy.builder("b").zone(BERLIN).limit("day", "1.00").build(),
				at(2026, 6, 1, 23, 59, BERLIN));
		budget.reserve("a", 1_000_000);
		budget.settle("a", 1_000_000);
		assertThat(budget.reserve("b", 1).allowed()).isFalse();
		assertThat(budget.peek().resetAfterMicros()).containsExactly(60_000_000L);
		budget.advance(Duration.ofMinutes(1));
		assertThat(budget.reserve("b", 1_000_000).allowed()).isTrue();
	}

	@Test
	void calendarDaysAcrossDaylightSavingChangesLast23And25Hours() {
		// 2026-03-29: clocks go forward in Berlin, the day has 23 hours
		Fixture spring = new Fixture(BudgetPolicy.builder("b").zone(BERLIN).limit("day", "1.00").build(),
				at(2026, 3, 29, 0, 0, BERLIN));
		spring.reserve("a", 1_000_000);
		spring.settle("a", 1_000_000);
		assertThat(spring.peek().resetAfterMicros()).containsExactly(23 * HOUR);
		spring.advance(Duration.ofHours(23).minusNanos(1_000));
		assertThat(spring.reserve("b", 1).allowed()).isFalse();
		spring.advance(Duration.ofNanos(1_000));
		assertThat(spring.reserve("b", 1).allowed()).isTrue();
		// 2026-10-25: clocks go back, the day has 25 hours
		Fixture autumn = new Fixture(BudgetPolicy.builder("b").zone(BERLIN).limit("day", "1.00").build(),
				at(2026, 10, 25, 0, 0, BERLIN));
		autumn.reserve("a", 1_000_000);
		autumn.settle("a", 1_000_000);
		assertThat(autumn.peek().resetAfterMicros()).containsExactly(25 * HOUR);
		autumn.advance(Duration.ofHours(24));
		assertThat(autumn.reserve("b", 1).allowed()).isFalse();
		autumn.advance(Duration.ofHours(1));
		assertThat(autumn.reserve("b", 1).allowed()).isTrue();
	}

	@Test
	void weeklyAndMonthlyWindowsStartOnMondayAndOnTheFirst() {
		BudgetWindow.Span week = BudgetWindow.parse("week").span(at(2026, 11, 29, 12, 0, BERLIN), BERLIN);
		assertThat(Instant.ofEpochSecond(week.startMicros() / 1_000_000L).atZone(BERLIN).toLocalDateTime())
			.isEqualTo(LocalDateTime.of(2026, 11, 23, 0, 0));
		BudgetWindow.Span month = BudgetWindow.parse("month").span(at(2026, 2, 14, 12, 0, BERLIN), BERLIN);
		assertThat(Instant.ofEpochSecond(month.endMicros() / 1_000_000L).atZone(BERLIN).toLocalDateTime())
			.isEqualTo(LocalDateTime.of(2026, 3, 1, 0, 0));
	}

	@Test
	void dailyAndMonthlyAmountsAreCheckedTogether() {
		Fixture budget = new Fixture(
				BudgetPolicy.builder("b").limit("day", "5.00").limit("month", "7.00").build(),
				at(2026, 6, 1, 12, 0, ZoneId.of("UTC")));
		budget.reserve("d1", 4_000_000);
		budget.settle("d1", 4_000_000);
		budget.advance(Duration.ofDays(1));
		BudgetDecision monthFull = budget.reserve("d2", 4_000_000);
		assertThat(monthFull.allowed()).isFalse();
		assertThat(monthFull.violated()).containsExactly(false, true);
		assertThat(monthFull.remainingMicros()).containsExactly(5_000_000, 3_000_000);
		assertThat(budget.reserve("d2", 3_000_000).allowed()).isTrue();
	}

	@Test
	void rollingWindowRunsFromTheFirstCharge() {
		Fixture budget = new Fixture(BudgetPolicy.builder("b").limit("24h", "1.00").build(),
				at(2026, 6, 1, 9, 30, ZoneId.of("UTC")));
		assertThat(budget.peek().resetAfterMicros()).containsExactly(0);
		budget.reserve("a", 1_000_000);
		budget.settle("a", 1_000_000);
		budget.advance(Duration.ofHours(10));
		BudgetDecision refused = budget.reserve("b", 1);
		assertThat(refused.allowed()).isFalse();
		assertThat(refused.retryAfterMicros()).isEqualTo(14 * HOUR);
		budget.advance(Duration.ofHours(14));
		assertThat(budget.reserve("b", 1_000_000).allowed()).isTrue();
		assertThat(budget.peek().resetAfterMicros()).containsExactly(24 * HOUR);
	}

	@Test
	void reservationOfADeadCallerReturnsWhenItsLeaseExpires() {
		Fixture budget = new Fixture(BudgetPolicy.builder("b").limit("day", "1.00").reservationTimeout(Duration.ofSeconds(30))
			.build(), at(2026, 6, 1, 12, 0, ZoneId.of("UTC")));
		budget.reserve("dead", 1_000_000);
		assertThat(budget.reserve("next", 1).allowed()).isFalse();
		budget.advance(Duration.ofSeconds(30));
		assertThat(budget.peek().reservedMicros()).isZero();
		assertThat(budget.reserve("next", 1_000_000).allowed()).isTrue();
		// a late settle of the dead call still records what it spent
		assertThat(budget.settle("dead", 10).spentMicros()).containsExactly(10);
	}

	@Test
	void budgetsFailClosedAndKeepTheEstimateOnErrorByDefault() {
		BudgetPolicy policy = BudgetPolicy.builder("b").limit("day", "1").build();
		assertThat(policy.failureMode()).isEqualTo(FailureMode.CLOSED);
		assertThat(policy.onError()).isEqualTo(OnError.KEEP);
	}

	private static long at(int year, int month, int day, int hour, int minute, ZoneId zone) {
		Instant instant = LocalDateTime.of(year, month, day, hour, minute).atZone(zone).toInstant();
		return instant.getEpochSecond() * 1_000_000L;
	}

	/**
	 * One budget key in an in-memory store on a manual clock.
	 */
	private static final class Fixture {

		private final BudgetPolicy policy;

		private final ManualTimeSource clock;

		private final InMemoryBudgetStore store;

		Fixture(BudgetPolicy policy, long startMicros) {
			this.policy = policy;
			this.clock = new ManualTimeSource(startMicros);
			this.store = new InMemoryBudgetStore(this.clock, 100);
		}

		BudgetDecision reserve(String id, long micros) {
			return this.store.reserve(this.policy, "k", id, micros);
		}

		BudgetDecision settle(String id, long micros) {
			return this.store.settle(this.policy, "k", id, micros);
		}

		BudgetDecision release(String id) {
			return this.store.release(this.policy, "k", id);
		}

		BudgetDecision peek() {
			return this.store.peek(this.policy, "k");
		}

		void advance(Duration duration) {
			this.clock.advance(duration);
		}

	}

}
