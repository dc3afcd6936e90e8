package dev.ratelimit.budget;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyBound;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Budgets are not a cache: the in-memory store never forgets spend inside its
 * window to make room for new tenants. The attack: a tenant spends most of its
 * day, then (it, or anyone) makes many cheap calls as ever new tenants, hoping
 * the store evicts the first tenant's spend so that it can spend again, or
 * lets the new tenants spend unrecorded once it is full. New tenants at the
 * bound reserve on the budget's overflow slots, each holding the budget's own
 * amounts.
 */
class InMemoryBudgetBoundTests {

	private static final int BOUND = 100;

	/** 2026-01-01T00:00:00Z: a day window starts here. */
	private final ManualTimeSource clock = new ManualTimeSource(1_767_225_600_000_000L);

	private final KeyBound bound = new KeyBound(BOUND);

	private final CostBudgets budgets = new CostBudgets(new InMemoryBudgetStore(this.clock, this.bound), null,
			new LimitKeys("rl", 128));

	private final BudgetPolicy daily = BudgetPolicy.builder("tenant-daily").limit("day", "1.00").build();

	@Test
	void manyFreshTenantsCannotMakeATenantsSpendReset() {
		this.budgets.reserve(this.daily, "acme", 800_000).settle(800_000);
		for (int i = 0; i < 100 * 19; i++) {
			this.clock.advanceMicros(1_000);
			this.budgets.reserve(this.daily, "tenant-" + (i % 100) + "-" + (i / 100), 1).settle(1);
		}
		assertThatExceptionOfType(BudgetExceededException.class)
			.isThrownBy(() -> this.budgets.reserve(this.daily, "acme", 800_000));
		assertThat(this.budgets.remaining(this.daily, "acme").spentMicros()).containsExactly(800_000);
		assertThat(this.bound.of("tenant-daily").count()).isEqualTo(BOUND);
		assertThat(this.bound.of("tenant-daily").overflowDecisions()).isEqualTo(100 * 19 - (BOUND - 1));
	}

	@Test
	void atTheBoundAnOpenBudgetStillLimitsANewTenant() {
		BudgetPolicy open = BudgetPolicy.builder("soft").limit("day", "1.00").failureMode(FailureMode.OPEN).build();
		for (int i = 0; i < BOUND; i++) {
			this.budgets.reserve(open, "t" + i, 1).settle(1);
		}
		Reservation newcomer = this.budgets.reserve(open, "newcomer", 1_000_000);
		assertThat(newcomer.decision()).as("held on an overflow slot").isNotNull();
		assertThat(newcomer.settle(1_000_000).spentMicros()).containsExactly(1_000_000);
		assertThatExceptionOfType(BudgetExceededException.class)
			.isThrownBy(() -> this.budgets.reserve(open, "newcomer", 1));
		// A tenant the store holds is still charged and limited by its own state.
		assertThatExceptionOfType(BudgetExceededException.class)
			.isThrownBy(() -> this.budgets.reserve(open, "t0", 1_000_000));
		assertThat(this.budgets.reserve(open, "t0", 999_999).decision().allowed()).isTrue();
	}

	@Test
	void aReservationOnAnOverflowSlotIsSettledThereEvenOnceTheBudgetHasRoomAgain() {
		KeyBound oneSlot = new KeyBound(1, 1, null);
		CostBudgets budgets = new CostBudgets(new InMemoryBudgetStore(this.clock, oneSlot), null,
				new LimitKeys("rl", 128));
		budgets.reserve(this.daily, "held", 1).settle(1);
		Reservation first = budgets.reserve(this.daily, "newcomer", 600_000);
		// Room again: the newcomer still reserves on the slot that holds its reservation.
		budgets.reset(this.daily, "held");
		assertThatExceptionOfType(BudgetExceededException.class)
			.isThrownBy(() -> budgets.reserve(this.daily, "newcomer", 600_000));
		assertThat(first.settle(500_000).spentMicros()).containsExactly(500_000);
		BudgetDecision slot = budgets.remaining(this.daily, "newcomer");
		assertThat(slot.reservedMicros()).isZero();
		assertThat(slot.remainingMicros()).containsExactly(500_000);
		assertThat(oneSlot.of("tenant-daily").count()).as("no entry of its own meanwhile").isZero();
	}

	@Test
	void aBudgetWhoseWindowsEndedMakesRoomForANewTenant() {
		for (int i = 0; i < BOUND; i++) {
			this.budgets.reserve(this.daily, "t" + i, 1).settle(1);
		}
		this.budgets.reserve(this.daily, "newcomer", 1).settle(1);
		assertThat(this.bound.of("tenant-daily").overflowDecisions()).isEqualTo(1);
		// The next day every key is forgettable, and so is the slot: its window is over and its markers
		// expired (the store keeps a key a second past that, for clocks read a little apart).
		this.clock.advance(Duration.ofDays(1).plusSeconds(1).plusMillis(1));
		assertThat(this.budgets.reserve(this.daily, "newcomer", 1).decision().allowed()).isTrue();
		assertThat(this.bound.dropped()).isEqualTo(BOUND);
		assertThat(this.bound.of("tenant-daily").count()).isEqualTo(1);
		assertThat(this.bound.of("tenant-daily").overflowDecisions()).isEqualTo(1);
	}

	@Test
	void readingAnUnknownTenantNeitherStoresItNorDecidesOnASlot() {
		for (int i = 0; i < BOUND; i++) {
			this.budgets.reserve(this.daily, "t" + i, 1).settle(1);
		}
		assertThat(this.budgets.remaining(this.daily, "stranger").remainingMicros()).containsExactly(1_000_000);
		assertThat(this.bound.of("tenant-daily").count()).isEqualTo(BOUND);
		assertThat(this.bound.of("tenant-daily").overflowDecisions()).isZero();
	}

	@Test
	void eachBudgetHasABoundOfItsOwn() {
		BudgetPolicy other = BudgetPolicy.builder("other").limit("day", "1.00").build();
		for (int i = 0; i < BOUND; i++) {
			this.budgets.reserve(this.daily, "t" + i, 1).settle(1);
		}
		assertThat(this.budgets.reserve(other, "t-new", 1).decision().allowed()).isTrue();
	}

}
