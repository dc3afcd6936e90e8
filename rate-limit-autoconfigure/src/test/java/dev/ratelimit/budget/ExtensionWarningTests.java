package dev.ratelimit.budget;

import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.support.CapturedLog;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A store that refuses to extend reservations (a script it refuses, not an
 * outage the limiter warned of) is one warning until an extension works
 * again, not one per streamed chunk: every stream in flight extends many
 * times.
 */
class ExtensionWarningTests {

	private static final BudgetPolicy MONEY = BudgetPolicy.builder("money").limit("day", "1.00").build();

	private final AtomicBoolean refusing = new AtomicBoolean(true);

	private final CostBudgets budgets = new CostBudgets(new RefusingExtensions(), null, new LimitKeys("rl", 128));

	@Test
	void failedExtensionsAreOneWarningUntilOneWorks() {
		Reservation reservation = this.budgets.reserve(MONEY, "t", 100_000);
		try (CapturedLog log = CapturedLog.of(CostBudgets.class)) {
			for (int i = 0; i < 5; i++) {
				assertThat(reservation.extend(10_000)).as("the stream stops at what it holds").isFalse();
			}
			assertThat(log.warnings()).hasSize(1)
				.first()
				.asString()
				.contains("Could not extend reservation", "further ones are logged at debug level");

			this.refusing.set(false);
			assertThat(reservation.extend(10_000)).isTrue();
			this.refusing.set(true);
			assertThat(reservation.extend(10_000)).isFalse();
			assertThat(log.warnings()).as("a new failure after one worked").hasSize(2);
		}
	}

	/** Memory, except that extensions fail while {@link #refusing} says so. */
	private final class RefusingExtensions implements BudgetStore {

		private final InMemoryBudgetStore memory = new InMemoryBudgetStore(new ManualTimeSource(), 100);

		@Override
		public BudgetDecision reserve(BudgetPolicy policy, String key, String id, long estimateMicros) {
			return this.memory.reserve(policy, key, id, estimateMicros);
		}

		@Override
		public BudgetDecision extend(BudgetPolicy policy, String key, String id, long moreMicros) {
			if (ExtensionWarningTests.this.refusing.get()) {
				throw new IllegalStateException("ERR the extension script is refused");
			}
			return this.memory.extend(policy, key, id, moreMicros);
		}

		@Override
		public BudgetDecision settle(BudgetPolicy policy, String key, String id, long actualMicros) {
			return this.memory.settle(policy, key, id, actualMicros);
		}

		@Override
		public BudgetDecision release(BudgetPolicy policy, String key, String id) {
			return this.memory.release(policy, key, id);
		}

		@Override
		public BudgetDecision peek(BudgetPolicy policy, String key) {
			return this.memory.peek(policy, key);
		}

	}

}
