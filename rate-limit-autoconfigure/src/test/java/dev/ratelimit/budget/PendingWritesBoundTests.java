package dev.ratelimit.budget;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.ratelimit.core.PendingWrites;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The keeper of settlements that could not reach their store: bounded, in
 * order, stopping at the first that still fails, and never losing one that
 * failed to apply. Its store here is the in-memory one, made to fail on
 * demand: what is tested is the keeper, not a store.
 */
class PendingWritesBoundTests {

	private static final BudgetPolicy MONEY = BudgetPolicy.builder("money").limit("day", "1.00").build();

	private final InMemoryBudgetStore store = new InMemoryBudgetStore(new ManualTimeSource(), 100);

	private final AtomicBoolean storeDown = new AtomicBoolean(true);

	private final List<String> applied = new ArrayList<>();

	private final PendingWrites<Settlement> pending = new PendingWrites<>("test", "settlement(s)", "charged", (settlement) -> {
		if (this.storeDown.get()) {
			throw new IllegalStateException("store down");
		}
		settlement.apply();
		this.applied.add(settlement.id());
	}, 2);

	@AfterEach
	void close() {
		this.pending.close();
	}

	@Test
	void keepsNoMoreThanItsBoundAndSaysWhenFull() {
		assertThat(this.pending.keep(settle("a", 100))).isTrue();
		assertThat(this.pending.isFull()).isFalse();
		assertThat(this.pending.keep(settle("b", 100))).isTrue();
		assertThat(this.pending.isFull()).isTrue();
		assertThat(this.pending.keep(settle("c", 100))).as("beyond the bound").isFalse();
		assertThat(this.pending.size()).isEqualTo(2);
	}

	@Test
	void appliesInOrderAndKeepsWhatStillFails() {
		this.store.reserve(MONEY, "t", "a", 500);
		this.store.reserve(MONEY, "t", "b", 500);
		this.pending.keep(settle("a", 300));
		this.pending.keep(settle("b", 200));
		assertThat(this.pending.applyPending()).as("the store still fails").isFalse();
		assertThat(this.pending.size()).isEqualTo(2);

		this.storeDown.set(false);
		assertThat(this.pending.applyPending()).isTrue();
		assertThat(this.applied).containsExactly("a", "b");
		assertThat(this.pending.size()).isZero();
		BudgetDecision state = this.store.peek(MONEY, "t");
		assertThat(state.spentMicros()).containsExactly(500);
		assertThat(state.reservedMicros()).isZero();
	}

	@Test
	void closingSaysWhatCouldNotBeApplied() {
		this.pending.keep(settle("a", 300));
		this.pending.keep(settle("b", 200));
		assertThat(this.pending.closed()).extracting(Settlement::id).containsExactly("a", "b");
	}

	private Settlement settle(String id, long micros) {
		return new Settlement(this.store, MONEY, "t", id, micros, false);
	}

}
