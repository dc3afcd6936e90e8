package dev.ratelimit.memory;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import org.junit.jupiter.api.Test;

import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.InMemoryBudgetStore;
import dev.ratelimit.concurrency.ConcurrencyLimitExceededException;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.concurrency.LocalConcurrencyLimiter;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyBound;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The keyed-state stress test: the three in-memory keyed stores (rate limits,
 * budgets, concurrency caps) under many threads on many keys with a small
 * {@link KeyBound}, so that idle keys are swept and new keys decided on
 * overflow slots at the bound all through the run. It guards the rules the
 * stores share: a key is forgotten only when forgetting it changes no decision,
 * a policy never holds more than its bound of keys, and a key moves between its
 * own state and its slot only when that changes nothing. A sweep that dropped a
 * key still in use, or a key decided on its slot and on an entry of its own at
 * once, would hand its caller a fresh quota, which shows here as a key admitted
 * beyond its policy.
 * <p>
 * Only public API is used. Every store reads a shared {@link ManualTimeSource}
 * that the workers advance by a fixed step per operation, so keys go idle and
 * are swept many times over a run without anybody sleeping. Each run asserts:
 * <ol>
 * <li>no deadlock: the workers finish within a generous bound;</li>
 * <li>the keys held per policy never exceed the bound, checked between phases
 * of the run (with every worker paused, since an insert at the bound counts a
 * key up and down again) and at the end;</li>
 * <li>no key is ever admitted beyond its policy, by a bound derived from the
 * policy and the clock, counted by the test itself rather than read back from
 * the store;</li>
 * <li>the flood did what it claims: keys were dropped and new keys were decided
 * on overflow slots.</li>
 * </ol>
 * Each store sees a few hot keys, used by every worker in turn so that they never
 * go idle and always run against their limit, and a flood of cold keys drawn at
 * random, which go idle, are swept, and mostly find the bound full.
 * <p>
 * Two more runs check what overflow slots add: a budget's spend on a slot is
 * exact however many threads settle on it, and every permit taken on a slot goes
 * back to it.
 */
class KeyedStatesStressTests {

	private static final int THREADS = 8;

	/** The bound of keys per policy: small, so that the cold keys fill it at once. */
	private static final int MAX_KEYS = 16;

	private static final int HOT_KEYS = 4;

	private static final int COLD_KEYS = 300;

	/** The bound is checked between phases, with every worker paused. */
	private static final int PHASES = 10;

	/** A deadlock guard, not a timing goal: a run takes about a second. */
	private static final long DEADLOCK_GUARD_SECONDS = 60;

	/** Micros since the epoch of 2026-01-01T00:00:00Z: a day starts here. */
	private static final long NEW_YEAR_2026 = 1_767_225_600_000_000L;

	private static final long DAY_MICROS = Duration.ofDays(1).toNanos() / 1_000L;

	/**
	 * Rate limits, a token bucket and a fixed window on one backend: 8 threads,
	 * 160,000 calls, one millisecond of the clock each, so that the backend's
	 * once-a-second sweep runs about 160 times. Every key's admissions stay
	 * within capacity + refill × the clock's advance (the bucket) and capacity
	 * times the windows the run touched (the window). The hot keys, never idle and
	 * so never rightly swept, run right up to that bound: a sweep that dropped one
	 * would give it a full bucket or an empty window at once, beyond it.
	 */
	@Test
	void rateLimitBackendNeverAdmitsAKeyBeyondItsPolicyWhileKeysAreSweptAndOverflow() throws Exception {
		long stepMicros = 1_000;
		int opsPerPhase = 2_000;
		ManualTimeSource clock = new ManualTimeSource();
		KeyBound bound = new KeyBound(MAX_KEYS);
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(clock, bound);
		// Both idle after a second of the clock: a thousand calls.
		RateLimitPolicy bucket = RateLimitPolicy.builder("bucket").capacity(10).refill("10/1s").build();
		RateLimitPolicy window = RateLimitPolicy.builder("window")
			.algorithm(Algorithm.FIXED_WINDOW)
			.capacity(10)
			.window("1s")
			.build();
		RateLimitPolicy[] policies = { bucket, window };
		// The backend keys its map by the storage key alone, which names the policy in production.
		String[][] hot = keys(policies, "hot", HOT_KEYS);
		String[][] cold = keys(policies, "cold", COLD_KEYS);
		Map<String, LongAdder> admitted = new ConcurrentHashMap<>();
		long start = clock.currentTimeMicros();
		for (int p = 0; p < policies.length; p++) {
			for (String key : hot[p]) {
				// Hot keys first: they are the ones whose limits matter.
				count(admitted, key, backend.tryConsume(policies[p], key, 1).allowed());
			}
		}

		stress(opsPerPhase, (worker, i, random) -> {
			// Calls alternate between the policies, and between a hot key and a cold one: a worker
			// uses each hot key every 16 calls, so no hot key is ever idle for a second of the clock.
			int p = i & 1;
			String key = ((i & 2) == 0) ? hot[p][(i >> 2) % HOT_KEYS] : cold[p][random.nextInt(COLD_KEYS)];
			count(admitted, key, backend.tryConsume(policies[p], key, 1).allowed());
			clock.advanceMicros(stepMicros);
		}, () -> {
			for (RateLimitPolicy policy : policies) {
				assertThat(bound.of(policy.name()).count()).as("keys of %s", policy.name())
					.isLessThanOrEqualTo(MAX_KEYS);
			}
			assertThat(backend.size()).isLessThanOrEqualTo((long) policies.length * MAX_KEYS);
		});

		long end = clock.currentTimeMicros();
		long elapsed = end - start;
		// Capacity + refill x elapsed, exactly: n tokens cost n periods' units, each microsecond adds tokens() units.
		long bucketBound = Math
			.floorDiv(bucket.capacity() * bucket.refill().periodMicros() + bucket.refill().tokens() * elapsed,
					bucket.refill().periodMicros());
		// Capacity per window: the windows are aligned to the epoch.
		long windows = Math.floorDiv(end, window.windowMicros()) - Math.floorDiv(start, window.windowMicros()) + 1;
		long windowBound = window.capacity() * windows;
		long[] bounds = { bucketBound, windowBound };
		for (int p = 0; p < policies.length; p++) {
			assertThat(overBound(admitted, hot[p], bounds[p])).as("hot keys of %s admitted beyond %d over %d us",
					policies[p].name(), bounds[p], elapsed)
				.isEmpty();
			// Cold keys are used now and then and stay far below (a call whose clock reading predates a
			// concurrent sweep of its key may find it fresh; it could not take a cold key near the bound),
			// on an entry of their own or on a slot, which never both decide for one key.
			assertThat(overBound(admitted, cold[p], bounds[p])).as("cold keys of %s admitted beyond %d",
					policies[p].name(), bounds[p])
				.isEmpty();
			// The check bites: the hot keys ran against their limit all the way.
			for (String key : hot[p]) {
				assertThat(admitted.get(key).sum()).as("admissions of %s", key)
					.isGreaterThanOrEqualTo(bounds[p] * 9 / 10);
			}
			assertThat(bound.of(policies[p].name()).count()).isLessThanOrEqualTo(MAX_KEYS);
		}
		assertThat(backend.size()).isLessThanOrEqualTo((long) policies.length * MAX_KEYS);
		assertThat(bound.dropped()).as("keys dropped as idle").isGreaterThan(MAX_KEYS);
		for (RateLimitPolicy policy : policies) {
			assertThat(bound.of(policy.name()).overflowDecisions()).as("decisions on overflow slots of %s",
					policy.name())
				.isGreaterThan(MAX_KEYS);
		}
	}

	/**
	 * Budgets, one of 1.00 a calendar day: 8 threads, 40,000 reservations, 30
	 * seconds of the clock each, so that about 14 days pass and every cold key is
	 * forgotten after its day (and its reservations' markers) ended. What is
	 * settled on a key within one day never exceeds the day's amount.
	 * <p>
	 * A settle is counted for the day the clock reads before and after it agree
	 * on; one whose readings straddle midnight is not counted, since the store may
	 * have charged either day. A settle whose reservation may have outlived its
	 * timeout (by the clock read around it, should a worker be descheduled that
	 * long) is not counted either: the store charges it whatever the budget says
	 * (the money was spent), on the state its key is decided on by then, within
	 * the bound. Workers release rather than settle a reservation that has grown
	 * old, so such settles are rare (a few a run, none on most).
	 */
	@Test
	void budgetStoreNeverSettlesAKeyBeyondItsDailyAmountWhileKeysAreSweptAndOverflow() throws Exception {
		long stepMicros = Duration.ofSeconds(30).toNanos() / 1_000L;
		int opsPerPhase = 500;
		ManualTimeSource clock = new ManualTimeSource(NEW_YEAR_2026);
		KeyBound bound = new KeyBound(MAX_KEYS);
		InMemoryBudgetStore store = new InMemoryBudgetStore(clock, bound);
		BudgetPolicy daily = BudgetPolicy.builder("daily")
			.limit("day", "1.00")
			.reservationTimeout(Duration.ofHours(2))
			.build();
		long amount = daily.limits().get(0).amountMicros();
		long timeout = daily.reservationTimeoutMicros();
		String[] hot = keys(new BudgetPolicy[] { daily }, "hot", HOT_KEYS)[0];
		String[] cold = keys(new BudgetPolicy[] { daily }, "cold", COLD_KEYS)[0];
		// Settled spend per key and day, as the test counted it.
		Map<String, Map<Long, LongAdder>> settled = new ConcurrentHashMap<>();
		LongAdder late = new LongAdder();
		LongAdder straddling = new LongAdder();
		LongAdder refusedByBudget = new LongAdder();
		for (String key : hot) {
			// Hot keys first, each held from now on by the markers of released and settled reservations.
			assertThat(store.reserve(daily, key, "warm-up", 1).allowed()).isTrue();
			store.release(daily, key, "warm-up");
		}

		stress(opsPerPhase, (worker, i, random) -> {
			// A worker uses each hot key every 8 of its calls, so no hot key is forgettable, ever.
			String key = ((i & 1) == 0) ? hot[(i >> 1) % HOT_KEYS] : cold[random.nextInt(COLD_KEYS)];
			String id = worker + "-" + i;
			long estimate = 50_000 + random.nextInt(200_001);
			long reservedFrom = clock.currentTimeMicros();
			if (store.reserve(daily, key, id, estimate).allowed()) {
				if (random.nextInt(8) == 0 || clock.currentTimeMicros() - reservedFrom >= timeout / 2) {
					// Released unused; also when this worker was descheduled so long that its
					// reservation might expire before it settles.
					store.release(daily, key, id);
				}
				else {
					long actual = estimate / 2 + random.nextLong(estimate / 2 + 1);
					long before = clock.currentTimeMicros();
					store.settle(daily, key, id, actual);
					long after = clock.currentTimeMicros();
					if (after - reservedFrom >= timeout) {
						late.increment();
					}
					else if (day(before) != day(after)) {
						straddling.increment();
					}
					else {
						settled.computeIfAbsent(key, (k) -> new ConcurrentHashMap<>())
							.computeIfAbsent(day(before), (d) -> new LongAdder())
							.add(actual);
					}
				}
			}
			else {
				refusedByBudget.increment();
				// Workers release whatever they do not settle, refused reservations too (release is
				// idempotent): its marker keeps an exhausted hot key held through midnight.
				store.release(daily, key, id);
			}
			if (i % 16 == 15) {
				// Reads run alongside; a read never adds a key.
				store.peek(daily, key);
			}
			clock.advanceMicros(stepMicros);
		}, () -> assertThat(bound.of(daily.name()).count()).as("keys of the budget").isLessThanOrEqualTo(MAX_KEYS));

		Map<String, Long> over = new TreeMap<>();
		settled.forEach((key, days) -> days.forEach((d, spent) -> {
			if (spent.sum() > amount) {
				over.put(key + " on day " + (d - day(NEW_YEAR_2026)), spent.sum());
			}
		}));
		assertThat(over).as("keys settled beyond %d in a day (%d settles straddled midnight, %d were late)", amount,
				straddling.sum(), late.sum())
			.isEmpty();
		// The check bites: on every day of the run, every hot key spent at least half its amount.
		long lastFullDay = day(clock.currentTimeMicros()) - 1;
		assertThat(lastFullDay - day(NEW_YEAR_2026)).as("days passed").isGreaterThanOrEqualTo(10);
		for (String key : hot) {
			for (long d = day(NEW_YEAR_2026); d <= lastFullDay; d++) {
				LongAdder spent = settled.get(key).get(d);
				assertThat((spent != null) ? spent.sum() : 0).as("settled on %s on day %d", key, d - day(NEW_YEAR_2026))
					.isGreaterThanOrEqualTo(amount / 2);
			}
		}
		assertThat(refusedByBudget.sum()).as("reservations refused by the budget").isPositive();
		assertThat(bound.of(daily.name()).count()).isLessThanOrEqualTo(MAX_KEYS);
		assertThat(bound.dropped()).as("keys dropped once their day ended").isGreaterThan(MAX_KEYS);
		assertThat(bound.of(daily.name()).overflowDecisions()).as("decisions on overflow slots")
			.isGreaterThan(MAX_KEYS);
	}

	/**
	 * Concurrency caps of 2 permits: 8 threads, each holding up to 2 permits at a
	 * time across its calls, 160,000 calls, one millisecond of the clock each.
	 * The calls in flight on a key, counted by the test between a permit's
	 * acquire and its release, never exceed its permits, whether the key has a
	 * bulkhead of its own or shares an overflow slot's; once every permit is
	 * back, no key and no slot has a call in flight.
	 */
	@Test
	void localConcurrencyLimiterNeverHandsAKeyMorePermitsThanItsCapWhileKeysAreSweptAndOverflow() throws Exception {
		long stepMicros = 1_000;
		int opsPerPhase = 2_000;
		int heldPerWorker = 2;
		ManualTimeSource clock = new ManualTimeSource();
		KeyBound bound = new KeyBound(MAX_KEYS);
		LocalConcurrencyLimiter limiter = new LocalConcurrencyLimiter(bound, clock);
		ConcurrencyPolicy cap = ConcurrencyPolicy.builder("cap").permits(2).failureMode(FailureMode.OPEN).build();
		String[] hot = keys(new ConcurrencyPolicy[] { cap }, "hot", HOT_KEYS)[0];
		String[] cold = keys(new ConcurrencyPolicy[] { cap }, "cold", COLD_KEYS)[0];
		Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();
		Map<String, AtomicInteger> mostInFlight = new ConcurrentHashMap<>();
		List<ArrayDeque<Held>> heldByWorker = new ArrayList<>();
		for (int w = 0; w < THREADS; w++) {
			heldByWorker.add(new ArrayDeque<>());
		}
		LongAdder full = new LongAdder();

		stress(opsPerPhase, (worker, i, random) -> {
			String key = ((i & 1) == 0) ? hot[(i >> 1) % HOT_KEYS] : cold[random.nextInt(COLD_KEYS)];
			ArrayDeque<Held> held = heldByWorker.get(worker);
			try {
				Permit permit = limiter.acquire(cap, key);
				int now = inFlight.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
				mostInFlight.computeIfAbsent(key, (k) -> new AtomicInteger()).accumulateAndGet(now, Math::max);
				held.addLast(new Held(key, permit));
			}
			catch (ConcurrencyLimitExceededException ex) {
				full.increment();
			}
			if (held.size() > heldPerWorker) {
				release(held.removeFirst(), inFlight);
			}
			clock.advanceMicros(stepMicros);
		}, () -> assertThat(bound.of(cap.name()).count()).as("keys of the cap").isLessThanOrEqualTo(MAX_KEYS));

		for (ArrayDeque<Held> held : heldByWorker) {
			while (!held.isEmpty()) {
				release(held.removeFirst(), inFlight);
			}
		}
		Map<String, Integer> over = new TreeMap<>();
		mostInFlight.forEach((key, most) -> {
			if (most.get() > cap.permits()) {
				over.put(key, most.get());
			}
		});
		assertThat(over).as("keys with more than %d calls in flight", cap.permits()).isEmpty();
		// The check bites: the hot keys were full, and callers were turned away.
		for (String key : hot) {
			assertThat(mostInFlight.get(key).get()).as("most calls in flight on %s", key).isEqualTo(cap.permits());
		}
		assertThat(full.sum()).as("calls refused a permit").isPositive();
		// Every permit is back, on its key's bulkhead or on its slot's (which a key not held reads).
		for (String key : hot) {
			assertThat(limiter.inUse(cap, key)).isZero();
		}
		for (String key : cold) {
			assertThat(limiter.inUse(cap, key)).as("in use on %s or its slot", key).isZero();
		}
		// No key is in use, so every one is dropped.
		assertThat(limiter.size()).isZero();
		assertThat(bound.of(cap.name()).count()).isZero();
		assertThat(bound.dropped()).as("keys dropped as unused").isGreaterThan(MAX_KEYS);
		assertThat(bound.of(cap.name()).overflowDecisions()).as("decisions on overflow slots")
			.isGreaterThan(MAX_KEYS);
	}

	/**
	 * A budget's overflow slot under 8 threads: the bound is full of keys that
	 * matter all day, so that every other key reserves and settles on the one
	 * slot, 4,000 times, within an hour of the clock. The slot ends with nothing
	 * reserved and exactly the spend the workers settled, never above the amount.
	 */
	@Test
	void budgetSpendOnAnOverflowSlotIsExactUnderManyThreads() throws Exception {
		ManualTimeSource clock = new ManualTimeSource(NEW_YEAR_2026);
		KeyBound bound = new KeyBound(MAX_KEYS, 1, null);
		InMemoryBudgetStore store = new InMemoryBudgetStore(clock, bound);
		BudgetPolicy daily = BudgetPolicy.builder("daily").limit("day", "20.00").build();
		long amount = daily.limits().get(0).amountMicros();
		for (int k = 0; k < MAX_KEYS; k++) {
			store.reserve(daily, "held-" + k, "r" + k, 1);
			store.settle(daily, "held-" + k, "r" + k, 1);
		}
		LongAdder settledSpend = new LongAdder();
		LongAdder refusedByBudget = new LongAdder();

		stress(50, (worker, i, random) -> {
			String key = "fresh-" + worker + "-" + i;
			String id = worker + "-" + i;
			long estimate = 10_000 + random.nextInt(40_001);
			if (store.reserve(daily, key, id, estimate).allowed()) {
				long actual = random.nextLong(estimate + 1);
				store.settle(daily, key, id, actual);
				settledSpend.add(actual);
			}
			else {
				refusedByBudget.increment();
			}
			clock.advanceMicros(100_000);
		}, () -> assertThat(bound.of(daily.name()).count()).isEqualTo(MAX_KEYS));

		BudgetDecision slot = store.peek(daily, "anybody-not-held");
		assertThat(slot.reservedMicros()).as("reserved on the slot once all settled").isZero();
		assertThat(slot.spentMicros()).containsExactly(settledSpend.sum());
		assertThat(settledSpend.sum()).isLessThanOrEqualTo(amount);
		assertThat(refusedByBudget.sum()).as("reservations the slot's amount refused").isPositive();
		assertThat(bound.of(daily.name()).overflowDecisions()).isEqualTo((long) THREADS * PHASES * 50);
	}

	/**
	 * Runs {@link #THREADS} workers for {@link #PHASES} phases of
	 * {@code opsPerPhase} operations each, checking the store between phases while
	 * every worker waits, and fails on the first failure of any worker or check.
	 */
	private static void stress(int opsPerPhase, Operation operation, Runnable betweenPhases) throws Exception {
		Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
		CyclicBarrier barrier = new CyclicBarrier(THREADS, betweenPhases);
		ExecutorService pool = Executors.newFixedThreadPool(THREADS, (runnable) -> {
			// Daemon threads: a deadlocked worker must not keep the test JVM alive.
			Thread thread = new Thread(runnable, "stress-worker");
			thread.setDaemon(true);
			return thread;
		});
		for (int w = 0; w < THREADS; w++) {
			int worker = w;
			pool.execute(() -> {
				SplittableRandom random = new SplittableRandom(31L * worker + 7);
				try {
					int i = 0;
					for (int phase = 0; phase < PHASES; phase++) {
						for (int n = 0; n < opsPerPhase; n++, i++) {
							operation.run(worker, i, random);
						}
						barrier.await();
					}
				}
				catch (BrokenBarrierException ex) {
					// Another worker, or a check between phases, failed first and broke the barrier.
				}
				catch (Throwable ex) {
					failures.add(ex);
					barrier.reset();
				}
			});
		}
		pool.shutdown();
		boolean finished = pool.awaitTermination(DEADLOCK_GUARD_SECONDS, TimeUnit.SECONDS);
		if (!finished) {
			pool.shutdownNow();
		}
		assertThat(finished).as("workers finished within %d s (deadlock guard)", DEADLOCK_GUARD_SECONDS).isTrue();
		Throwable failure = failures.peek();
		if (failure instanceof AssertionError assertion) {
			throw assertion;
		}
		if (failure != null) {
			throw new AssertionError("a worker failed", failure);
		}
	}

	/** The storage keys of each policy: its name and a number. */
	private static String[][] keys(Limit[] policies, String kind, int count) {
		String[][] keys = new String[policies.length][count];
		for (int p = 0; p < policies.length; p++) {
			for (int k = 0; k < count; k++) {
				keys[p][k] = policies[p].name() + ":" + kind + "-" + k;
			}
		}
		return keys;
	}

	private static void count(Map<String, LongAdder> admitted, String key, boolean allowed) {
		if (allowed) {
			admitted.computeIfAbsent(key, (k) -> new LongAdder()).increment();
		}
	}

	private static Map<String, Long> overBound(Map<String, LongAdder> admitted, String[] keys, long bound) {
		Map<String, Long> over = new TreeMap<>();
		for (String key : keys) {
			LongAdder count = admitted.get(key);
			if (count != null && count.sum() > bound) {
				over.put(key, count.sum());
			}
		}
		return over;
	}

	private static void release(Held held, Map<String, AtomicInteger> inFlight) {
		// Counted out before the permit goes back, so the count never lags behind the limiter.
		inFlight.get(held.key()).decrementAndGet();
		held.permit().release();
	}

	/** The UTC calendar day of a time, as the budget's day windows place it. */
	private static long day(long micros) {
		return Math.floorDiv(micros, DAY_MICROS);
	}

	/** One operation of a worker; {@code i} counts the worker's operations over the run. */
	@FunctionalInterface
	private interface Operation {

		void run(int worker, int i, SplittableRandom random) throws Exception;

	}

	private record Held(String key, Permit permit) {
	}

}
