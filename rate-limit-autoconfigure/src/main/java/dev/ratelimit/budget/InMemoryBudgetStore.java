package dev.ratelimit.budget;

import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;

import dev.ratelimit.core.TimeSource;

/**
 * Keeps budget state in this process: exact for one instance, and the local
 * fallback of budgets whose Redis is down. Operations on one key are
 * serialised by the cache's per-key compute. A key is forgotten once its windows have ended and its leases
 * expired, and at most {@code maxKeys} keys are kept.
 */
public final class InMemoryBudgetStore implements BudgetStore {

	private static final long TOLERANCE_NANOS = TimeUnit.SECONDS.toNanos(1);

	private final TimeSource time;

	private final Cache<String, Entry> entries;

	/**
	 * Creates a store.
	 * @param time the clock; its readings must be microseconds since the epoch,
	 * since calendar windows are placed by it
	 * @param maxKeys the most keys kept
	 */
	public InMemoryBudgetStore(TimeSource time, long maxKeys) {
		this.time = time;
		this.entries = Caffeine.newBuilder()
			.maximumSize(maxKeys)
			.expireAfter(new UntilForgettable())
			.ticker(() -> time.currentTimeMicros() * 1_000L)
			.executor(Runnable::run)
			.build();
	}

	@Override
	public BudgetDecision reserve(BudgetPolicy policy, String key, String id, long estimateMicros) {
		return apply(policy, key, (state) -> state.reserve(policy, spans(policy), id, estimateMicros, now()));
	}

	@Override
	public BudgetDecision settle(BudgetPolicy policy, String key, String id, long actualMicros) {
		return apply(policy, key, (state) -> state.settle(policy, spans(policy), id, actualMicros, now()));
	}

	@Override
	public BudgetDecision release(BudgetPolicy policy, String key, String id) {
		return apply(policy, key, (state) -> state.release(policy, spans(policy), id, now()));
	}

	@Override
	public BudgetDecision peek(BudgetPolicy policy, String key) {
		return apply(policy, key, (state) -> state.peek(policy, spans(policy), now()));
	}

	@Override
	public void reset(BudgetPolicy policy, String key) {
		this.entries.invalidate(key);
	}

	private BudgetDecision apply(BudgetPolicy policy, String key, Function<BudgetState, BudgetDecision> operation) {
		BudgetDecision[] decision = new BudgetDecision[1];
		// compute holds the key's lock and sees an expired entry as absent, so no
		// thread can work on an entry another has already replaced.
		this.entries.asMap().compute(key, (k, entry) -> {
			Entry current = (entry != null) ? entry : new Entry(policy.limits().size());
			decision[0] = operation.apply(current.state);
			long forgettable = current.state.forgettableAt(policy);
			current.expiresAtNanos = (forgettable == BudgetState.NONE) ? 0
					: forgettable * 1_000L + TOLERANCE_NANOS;
			return current;
		});
		return decision[0];
	}

	private long now() {
		return this.time.currentTimeMicros();
	}

	private BudgetWindow.Span[] spans(BudgetPolicy policy) {
		return BudgetStore.spans(policy, now());
	}

	private static final class Entry {

		final BudgetState state;

		volatile long expiresAtNanos;

		Entry(int limits) {
			this.state = new BudgetState(limits);
		}

	}

	/**
	 * Keeps an entry until its state is forgettable, measured from the last write.
	 */
	private static final class UntilForgettable implements Expiry<String, Entry> {

		@Override
		public long expireAfterCreate(String key, Entry entry, long currentTime) {
			return Math.max(TOLERANCE_NANOS, entry.expiresAtNanos - currentTime);
		}

		@Override
		public long expireAfterUpdate(String key, Entry entry, long currentTime, long currentDuration) {
			return Math.max(TOLERANCE_NANOS, entry.expiresAtNanos - currentTime);
		}

		@Override
		public long expireAfterRead(String key, Entry entry, long currentTime, long currentDuration) {
			return currentDuration;
		}

	}

}
