package dev.ratelimit.memory;

import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;

import dev.ratelimit.core.Acquisition;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.LimitState;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.TimeSource;

/**
 * Keeps limiter state in this process: the embedded default, exact for one
 * instance. Each key's state is guarded by its own monitor, so callers only
 * contend when they share a key; a layered decision locks its keys in key order,
 * so two such decisions cannot deadlock.
 * <p>
 * Memory is bounded twice: a key left idle until forgetting it changes nothing
 * (its bucket would be full, its windows over) is dropped, and at most
 * {@code maxKeys} keys are kept, the least useful evicted first. Eviction by
 * size forgets state that still mattered, which can admit that key's caller
 * early; size the bound above the number of concurrently active keys.
 */
public final class InMemoryRateLimitBackend implements RateLimitBackend {

	/**
	 * Caffeine leaves an entry's expiry alone when a read would move it by less
	 * than one second, so an entry can expire up to that much early. Keeping state
	 * that much longer than needed never drops state that still matters.
	 */
	private static final long EXPIRY_TOLERANCE_NANOS = TimeUnit.SECONDS.toNanos(1);

	private static final Comparator<Entry> BY_KEY = Comparator.comparing((entry) -> entry.key);

	private final TimeSource time;

	private final Cache<String, Entry> entries;

	/**
	 * Creates a backend.
	 * @param time the clock
	 * @param maxKeys the most keys kept at once
	 */
	public InMemoryRateLimitBackend(TimeSource time, long maxKeys) {
		if (maxKeys <= 0) {
			throw new IllegalArgumentException("maximum number of keys must be positive, was " + maxKeys);
		}
		this.time = time;
		this.entries = Caffeine.newBuilder()
			.maximumSize(maxKeys)
			.expireAfter(new UntilIrrelevant())
			.ticker(() -> time.currentTimeMicros() * 1_000L)
			.executor(Runnable::run)
			.build();
	}

	@Override
	public Decision tryConsume(RateLimitPolicy policy, String key, long cost) {
		long now = this.time.currentTimeMicros();
		Entry entry = entry(policy, key, now);
		synchronized (entry) {
			return entry.state.decide(policy, cost, now, true);
		}
	}

	@Override
	public List<Decision> tryConsumeAll(List<Acquisition> acquisitions) {
		if (acquisitions.size() == 1) {
			Acquisition only = acquisitions.get(0);
			return List.of(tryConsume(only.policy(), only.key(), only.cost()));
		}
		long now = this.time.currentTimeMicros();
		Entry[] byIndex = new Entry[acquisitions.size()];
		for (int i = 0; i < byIndex.length; i++) {
			Acquisition acquisition = acquisitions.get(i);
			byIndex[i] = entry(acquisition.policy(), acquisition.key(), now);
		}
		Entry[] lockOrder = byIndex.clone();
		Arrays.sort(lockOrder, BY_KEY);
		return decideLocked(lockOrder, 0, byIndex, acquisitions, now);
	}

	/**
	 * Holds the monitors of every entry, in key order, then decides all or nothing.
	 */
	private static List<Decision> decideLocked(Entry[] lockOrder, int depth, Entry[] byIndex,
			List<Acquisition> acquisitions, long now) {
		if (depth < lockOrder.length) {
			synchronized (lockOrder[depth]) {
				return decideLocked(lockOrder, depth + 1, byIndex, acquisitions, now);
			}
		}
		Decision[] decisions = new Decision[byIndex.length];
		boolean allAllowed = true;
		for (int i = 0; i < decisions.length; i++) {
			Acquisition acquisition = acquisitions.get(i);
			decisions[i] = byIndex[i].state.decide(acquisition.policy(), acquisition.cost(), now, false);
			allAllowed &= decisions[i].allowed();
		}
		for (int i = 0; i < decisions.length; i++) {
			Acquisition acquisition = acquisitions.get(i);
			if (allAllowed) {
				decisions[i] = byIndex[i].state.decide(acquisition.policy(), acquisition.cost(), now, true);
			}
			else if (decisions[i].allowed()) {
				// Nothing is taken when another policy denies: report the state as it stays.
				decisions[i] = byIndex[i].state.decide(acquisition.policy(), 0, now, false);
			}
		}
		return List.of(decisions);
	}

	@Override
	public void reset(RateLimitPolicy policy, String key) {
		// A caller holding the old entry finishes on it; the next one starts afresh.
		this.entries.invalidate(key);
	}

	private Entry entry(RateLimitPolicy policy, String key, long now) {
		// A hit first, without a capturing lambda: the hot path allocates nothing here.
		Entry entry = this.entries.getIfPresent(key);
		return (entry != null) ? entry : this.entries.get(key, (k) -> new Entry(k, policy, now));
	}

	/**
	 * Returns the number of keys currently held (an estimate while other threads run).
	 * @return the number of keys
	 */
	public long size() {
		this.entries.cleanUp();
		return this.entries.estimatedSize();
	}

	private static final class Entry {

		final String key;

		final LimitState state;

		final long idleNanos;

		Entry(String key, RateLimitPolicy policy, long now) {
			this.key = key;
			this.state = LimitState.create(policy, now);
			// Below 2^61: policies keep their windows under 2^51 microseconds.
			this.idleNanos = policy.idleMicros() * 1_000L + EXPIRY_TOLERANCE_NANOS;
		}

	}

	/**
	 * Expires a key once it has been idle long enough that forgetting it changes nothing.
	 */
	private static final class UntilIrrelevant implements Expiry<String, Entry> {

		@Override
		public long expireAfterCreate(String key, Entry entry, long currentTime) {
			return entry.idleNanos;
		}

		@Override
		public long expireAfterUpdate(String key, Entry entry, long currentTime, long currentDuration) {
			return entry.idleNanos;
		}

		@Override
		public long expireAfterRead(String key, Entry entry, long currentTime, long currentDuration) {
			return entry.idleNanos;
		}

	}

}
