package dev.ratelimit.budget;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.RateLimitBackendUnavailableException;
import dev.ratelimit.redis.RedisStoresForTests;
import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.support.RefusingRedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Budgets whose Redis refuses connections: closed refuses the work, open lets it
 * run unrecorded, local reserves in memory.
 */
class CostBudgetsFailureModeTests {

	private final LettuceConnectionFactory deadRedis = RefusingRedis.connectionFactory();

	private final ManualTimeSource clock = new ManualTimeSource();

	private final CostBudgets budgets = new CostBudgets(RedisStoresForTests.budgetStore(this.deadRedis, this.clock),
			new InMemoryBudgetStore(this.clock, 100), new LimitKeys("rl", 128));

	@AfterEach
	void close() {
		this.deadRedis.destroy();
	}

	@Test
	void closedBudgetRefusesTheWork() {
		BudgetPolicy closed = BudgetPolicy.builder("money").limit("day", "1.00").build();
		assertThatExceptionOfType(RateLimitBackendUnavailableException.class)
			.isThrownBy(() -> this.budgets.reserve(closed, "t", 100))
			.satisfies((ex) -> assertThat(ex.getPolicy()).isEqualTo("money"));
	}

	@Test
	void openBudgetLetsTheWorkRunUnrecorded() {
		BudgetPolicy open = BudgetPolicy.builder("soft").limit("day", "1.00").failureMode(FailureMode.OPEN).build();
		Reservation reservation = this.budgets.reserve(open, "t", 1_000_000);
		assertThat(reservation.decision()).isNull();
		assertThat(reservation.settle(1_000_000)).isNull();
		assertThat(this.budgets.reserve(open, "t", 1_000_000)).isNotNull();
	}

	@Test
	void localBudgetReservesInMemoryAndSettlesThere() {
		BudgetPolicy local = BudgetPolicy.builder("fallback").limit("day", "1.00").failureMode(FailureMode.LOCAL)
			.build();
		Reservation first = this.budgets.reserve(local, "t", 600_000);
		assertThat(first.decision().remainingMicros()).containsExactly(400_000);
		assertThat(first.settle(600_000).spentMicros()).containsExactly(600_000);
		assertThatExceptionOfType(BudgetExceededException.class)
			.isThrownBy(() -> this.budgets.reserve(local, "t", 600_000))
			.satisfies((ex) -> assertThat(ex.getViolatedPolicies()).containsExactly("fallback"));
	}

}
