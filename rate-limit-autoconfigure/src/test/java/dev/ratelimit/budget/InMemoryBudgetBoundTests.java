package dev.ratelimit.budget;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyBound;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.RateLimitBackendUnavailableException;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Budgets are not a cache: the in-memory store never forgets spend inside its
 * window to make room for new tenants. The attack: a tenant spends most of its
 * day, then (it, or anyone) makes many cheap calls as ever new tenants, hoping
 * the store evicts the first tenant's spend so that it can spend again.
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
		int refused = 0;
		for (int i = 0; i < 100 * 19; i++) {
			this.clock.advanceMicros(1_000);
			try {
				this.budgets.reserve(this.daily, "tenant-" + (i % 100) + "-" + (i / 100), 1).settle(1);
			}
			catch (RateLimitBackendUnavailableException ex) {
				refused++;
			}
		}
		assertThatExceptionOfType(BudgetExceededException.class)
			.isThrownBy(() -> this.budgets.reserve(this.daily, "acme", 800_000));
		assertThat(this.budgets.remaining(this.daily, "acme").spentMicros()).containsExactly(800_000);
		assertThat(refused).isEqualTo(100 * 19 - (BOUND - 1));
		assertThat(this.bound.refused()).isEqualTo(refused);
	}

	@Test
	void atTheBoundAnOpenBudgetRunsANewTenantUnrecorded() {
		BudgetPolicy open = BudgetPolicy.builder("soft").limit("day", "1.00").failureMode(FailureMode.OPEN).build();
		for (int i = 0; i < BOUND; i++) {
			this.budgets.reserve(open, "t" + i, 1).settle(1);
		}
		Reservation newcomer = this.budgets.reserve(open, "newcomer", 1_000_000);
		assertThat(newcomer.decision()).as("held nowhere").isNull();
		assertThat(newcomer.settle(1_000_000)).isNull();
		// A tenant the store holds is still charged and limited.
		assertThatExceptionOfType(BudgetExceededException.class)
			.isThrownBy(() -> this.budgets.reserve(open, "t0", 1_000_000));
	}

	@Test
	void aBudgetWhoseWindowsEndedMakesRoomForANewTenant() {
		for (int i = 0; i < BOUND; i++) {
			this.budgets.reserve(this.daily, "t" + i, 1).settle(1);
		}
		assertThatExceptionOfType(RateLimitBackendUnavailableException.class)
			.isThrownBy(() -> this.budgets.reserve(this.daily, "newcomer", 1));
		// The next day every key is forgettable: its window is over and its markers expired
		// (the store keeps a key a second past that, for clocks read a little apart).
		this.clock.advance(Duration.ofDays(1).plusSeconds(1).plusMillis(1));
		assertThat(this.budgets.reserve(this.daily, "newcomer", 1).decision().allowed()).isTrue();
		assertThat(this.bound.dropped()).isEqualTo(BOUND);
		assertThat(this.bound.of("tenant-daily").count()).isEqualTo(1);
	}

	@Test
	void readingAnUnknownTenantNeitherStoresItNorIsRefused() {
		for (int i = 0; i < BOUND; i++) {
			this.budgets.reserve(this.daily, "t" + i, 1).settle(1);
		}
		assertThat(this.budgets.remaining(this.daily, "stranger").remainingMicros()).containsExactly(1_000_000);
		assertThat(this.bound.of("tenant-daily").count()).isEqualTo(BOUND);
		assertThat(this.bound.refused()).isZero();
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
