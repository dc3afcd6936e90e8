package dev.ratelimit.budget;

import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.UnconfirmedWrite;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Reservations that got no answer (a slow or frozen store) are released once
 * the store answers, by a keeper of their own: however many a slow store times
 * out, they never count against the bound of kept settlements, whose filling
 * refuses new reservations.
 */
class UnansweredReservationsTests {

	/** Room for every unanswered reservation and one more, whether or not they are released yet. */
	private static final BudgetPolicy MONEY = BudgetPolicy.builder("money")
		.limit("day", "10.00")
		.failureMode(FailureMode.OPEN)
		.build();

	private final AtomicBoolean slow = new AtomicBoolean(true);

	private final InMemoryBudgetStore memory = new InMemoryBudgetStore(new ManualTimeSource(), 100);

	private final CostBudgets budgets = new CostBudgets(new SlowStore(), null, new LimitKeys("rl", 128));

	@AfterEach
	void close() {
		this.budgets.close();
	}

	@Test
	void unansweredReservationsAreReleasedWithoutFillingTheSettlementsBound() {
		for (int i = 0; i < 1000; i++) {
			// Timed out: the budget fails open, and the store applies the reservation all the same.
			assertThat(this.budgets.reserve(MONEY, "t", 1_000).decision()).isNull();
		}
		assertThat(this.budgets.pendingSettlements()).as("settlements kept").isZero();

		this.slow.set(false);
		Reservation answered = this.budgets.reserve(MONEY, "t", 1_000);
		assertThat(answered.decision()).as("decided by the store").isNotNull();
		answered.settle(1_000);
		await().untilAsserted(() -> assertThat(this.budgets.remaining(MONEY, "t").reservedMicros())
			.as("every unanswered reservation released")
			.isZero());
	}

	/** A timeout that may have been applied, as the Redis store's is. */
	static final class Unanswered extends RuntimeException implements UnconfirmedWrite {

		private static final long serialVersionUID = 1L;

		Unanswered() {
			super("no answer in time");
		}

	}

	/** Memory that applies every reservation but, while slow, answers none of them. */
	private final class SlowStore implements BudgetStore {

		@Override
		public BudgetDecision reserve(BudgetPolicy policy, String key, String id, long estimateMicros) {
			BudgetDecision decision = UnansweredReservationsTests.this.memory.reserve(policy, key, id, estimateMicros);
			if (UnansweredReservationsTests.this.slow.get()) {
				throw new Unanswered();
			}
			return decision;
		}

		@Override
		public BudgetDecision settle(BudgetPolicy policy, String key, String id, long actualMicros) {
			return UnansweredReservationsTests.this.memory.settle(policy, key, id, actualMicros);
		}

		@Override
		public BudgetDecision release(BudgetPolicy policy, String key, String id) {
			return UnansweredReservationsTests.this.memory.release(policy, key, id);
		}

		@Override
		public BudgetDecision peek(BudgetPolicy policy, String key) {
			return UnansweredReservationsTests.this.memory.peek(policy, key);
		}

	}

}
