package dev.ratelimit.memory;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.BudgetExceededException;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.BudgetStore;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.budget.InMemoryBudgetStore;
import dev.ratelimit.budget.Reservation;
import dev.ratelimit.concurrency.ConcurrencyLimitExceededException;
import dev.ratelimit.concurrency.ConcurrencyLimiter;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.concurrency.DistributedConcurrencyLimiter;
import dev.ratelimit.concurrency.DistributedLimitersForTests;
import dev.ratelimit.concurrency.LocalConcurrencyLimiter;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.concurrency.PermitStore;
import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyBound;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.LimitListener;
import dev.ratelimit.core.LimitRequest;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitOutcome;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.Sleeper;
import dev.ratelimit.core.StoreParts;
import dev.ratelimit.support.CapturedLog;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.as;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The attack on a bounded in-memory store: an exhausted caller (or anyone
 * else) sends requests with ever new keys, hoping that making room for them
 * evicts its own exhausted state or somebody else's, or that the store, once
 * full, lets the newcomers through unchecked. Whatever the algorithm, the kind
 * of limit, the failure mode and whether the store is the primary one or the
 * local fallback of an outage: a key whose state still matters is never
 * forgotten, and a newcomer arriving during the flood is decided against its
 * policy's own limit on a shared overflow slot, so it may be refused early but
 * never passes that limit.
 */
class KeyFloodTests {

	private static final int BOUND = 100;

	private static final int FLOOD = 10_000;

	/** Calls a newcomer makes during the flood, one after each fresh key. */
	private static final int NEWCOMER_CALLS = 99;

	private final ManualTimeSource clock = new ManualTimeSource(1_767_225_600_000_000L);

	private final KeyBound bound = new KeyBound(BOUND);

	private final InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(this.clock, this.bound);

	private final LimitKeys keys = new LimitKeys("rl", 128);

	static Stream<Algorithm> everyAlgorithm() {
		return Stream.of(Algorithm.values());
	}

	static Stream<Arguments> everyAlgorithmAndFailureMode() {
		return everyAlgorithm().flatMap((algorithm) -> Stream.of(FailureMode.OPEN, FailureMode.LOCAL, FailureMode.CLOSED)
			.map((mode) -> Arguments.of(algorithm, mode)));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("everyAlgorithm")
	void aFloodOfFreshKeysNeverLetsAnExhaustedKeyPassEarly(Algorithm algorithm) {
		RateLimitPolicy policy = policy(algorithm, FailureMode.LOCAL);
		exhaust(policy, "victim");
		for (int i = 0; i < FLOOD; i++) {
			this.clock.advanceMicros(1);
			this.backend.tryConsume(policy, "fresh-" + i, 1);
			if (i % 1_000 == 0) {
				assertThat(this.backend.tryConsume(policy, "victim", 1).allowed()).as("victim after %d fresh keys", i)
					.isFalse();
			}
		}
		assertThat(this.backend.tryConsume(policy, "victim", 1).allowed()).isFalse();
		assertThat(this.bound.of(policy.name()).count()).isEqualTo(BOUND);
	}

	@ParameterizedTest(name = "{0}, failure mode {1}")
	@MethodSource("everyAlgorithmAndFailureMode")
	void aNewcomerDuringAFloodIsAdmittedAtMostItsLimit(Algorithm algorithm, FailureMode mode) {
		RateLimiter limiter = new RateLimiter(this.backend, this.keys, Sleeper.system(), null, LimitListener.NONE);
		newcomerDuringAFloodIsAdmittedAtMostItsLimit(limiter, policy(algorithm, mode));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("everyAlgorithm")
	void aNewcomerDuringAFloodInAnOutageIsAdmittedAtMostItsLocalLimit(Algorithm algorithm) {
		RateLimiter limiter = new RateLimiter(unavailable(RateLimitBackend.class), this.keys, Sleeper.system(),
				this.backend, LimitListener.NONE);
		newcomerDuringAFloodIsAdmittedAtMostItsLimit(limiter, policy(algorithm, FailureMode.LOCAL));
	}

	private void newcomerDuringAFloodIsAdmittedAtMostItsLimit(RateLimiter limiter, RateLimitPolicy policy) {
		// What one key is admitted before its first refusal: the shaping bucket queues, the others take.
		int limit = exhaust(limiter, policy, "victim");
		// The flood fills the bound (the victim holds one key), then goes on past it.
		for (int i = 0; i < BOUND - 1; i++) {
			acquire(limiter, policy, "fresh-" + i);
		}
		int admitted = 0;
		for (int i = 0; i < NEWCOMER_CALLS; i++) {
			acquire(limiter, policy, "fresh-" + (BOUND + i));
			if (acquire(limiter, policy, "newcomer").allowed()) {
				admitted++;
			}
			assertThat(acquire(limiter, policy, "victim").allowed()).as("victim during the flood").isFalse();
		}
		assertThat(admitted).as("newcomer calls admitted of %d", NEWCOMER_CALLS).isLessThanOrEqualTo(limit);
		assertThat(this.bound.of(policy.name()).count()).isEqualTo(BOUND);
	}

	@ParameterizedTest(name = "failure mode {0}")
	@EnumSource(value = FailureMode.class)
	void aNewTenantDuringAFloodNeverSpendsBeyondItsBudget(FailureMode mode) {
		CostBudgets budgets = new CostBudgets(new InMemoryBudgetStore(this.clock, this.bound), null, this.keys);
		newTenantDuringAFloodNeverSpendsBeyondItsBudget(budgets, budget(mode));
	}

	@Test
	void aNewTenantDuringAFloodInAnOutageNeverSpendsBeyondItsBudget() {
		CostBudgets budgets = new CostBudgets(unavailable(BudgetStore.class),
				new InMemoryBudgetStore(this.clock, this.bound), this.keys);
		newTenantDuringAFloodNeverSpendsBeyondItsBudget(budgets, budget(FailureMode.LOCAL));
	}

	private void newTenantDuringAFloodNeverSpendsBeyondItsBudget(CostBudgets budgets, BudgetPolicy budget) {
		budgets.reserve(budget, "victim", 800_000).settle(800_000);
		for (int i = 0; i < BOUND - 1; i++) {
			budgets.reserve(budget, "fresh-" + i, 10_000).settle(10_000);
		}
		List<Reservation> held = new ArrayList<>();
		for (int i = 0; i < NEWCOMER_CALLS; i++) {
			this.clock.advanceMicros(1);
			reserveAndSettle(budgets, budget, "fresh-" + (BOUND + i), 10_000);
			try {
				held.add(budgets.reserve(budget, "newcomer", 300_000));
			}
			catch (BudgetExceededException ex) {
				// Refused, perhaps early: the flood shares the newcomer's slot.
			}
			assertThatExceptionOfType(BudgetExceededException.class).as("victim during the flood")
				.isThrownBy(() -> budgets.reserve(budget, "victim", 300_000));
		}
		long reserved = held.stream().mapToLong(Reservation::estimateMicros).sum();
		assertThat(reserved).as("reserved by %d admitted reservations", held.size()).isLessThanOrEqualTo(1_000_000);
		for (Reservation reservation : held) {
			BudgetDecision settled = reservation.settle(reservation.estimateMicros());
			assertThat(settled).as("a settle recorded somewhere").isNotNull();
			assertThat(settled.spentMicros()[0]).as("spent on the newcomer's state").isLessThanOrEqualTo(1_000_000);
		}
		assertThat(this.bound.of(budget.name()).count()).isEqualTo(BOUND);
	}

	@ParameterizedTest(name = "failure mode {0}")
	@EnumSource(value = FailureMode.class)
	void aNewKeyDuringAFloodNeverHoldsMoreThanItsPermits(FailureMode mode) {
		LocalConcurrencyLimiter local = new LocalConcurrencyLimiter(this.bound, this.clock);
		newKeyDuringAFloodNeverHoldsMoreThanItsPermits(local, local, cap(mode, ConcurrencyPolicy.Scope.LOCAL));
	}

	@Test
	void aNewKeyDuringAFloodInAnOutageNeverHoldsMoreThanItsPermits() {
		LocalConcurrencyLimiter local = new LocalConcurrencyLimiter(this.bound, this.clock);
		try (DistributedConcurrencyLimiter distributed = DistributedLimitersForTests.create(
				unavailable(PermitStore.class), this.keys, local, this.clock, (micros) -> {
				}, null)) {
			newKeyDuringAFloodNeverHoldsMoreThanItsPermits(distributed, local,
					cap(FailureMode.LOCAL, ConcurrencyPolicy.Scope.DISTRIBUTED));
		}
	}

	private void newKeyDuringAFloodNeverHoldsMoreThanItsPermits(ConcurrencyLimiter limiter,
			LocalConcurrencyLimiter local, ConcurrencyPolicy cap) {
		List<Permit> held = new ArrayList<>();
		held.add(limiter.acquire(cap, "victim"));
		held.add(limiter.acquire(cap, "victim"));
		for (int i = 0; i < BOUND - 1; i++) {
			held.add(limiter.acquire(cap, "fresh-" + i));
		}
		List<Permit> newcomer = new ArrayList<>();
		for (int i = 0; i < NEWCOMER_CALLS; i++) {
			this.clock.advanceMicros(1);
			tryAcquire(limiter, cap, "fresh-" + (BOUND + i), held);
			tryAcquire(limiter, cap, "newcomer", newcomer);
			assertThatExceptionOfType(ConcurrencyLimitExceededException.class).as("victim during the flood")
				.isThrownBy(() -> limiter.acquire(cap, "victim"));
		}
		assertThat(newcomer).as("permits the newcomer holds at once").hasSizeLessThanOrEqualTo(cap.permits());
		assertThat(this.bound.of(cap.name()).count()).isEqualTo(BOUND);
		held.forEach(Permit::release);
		newcomer.forEach(Permit::release);
		assertThat(local.inUse(cap, "victim")).isZero();
		assertThat(local.inUse(cap, "newcomer")).isZero();
		assertThat(local.size()).as("keys with calls in flight").isZero();
	}

	@Test
	void eachStoreCountsItsOverflowDecisionsAndWarnsOncePerPolicy() {
		KeyBound rateLimits = new KeyBound(BOUND, 64, "rate-limit.memory.max-keys");
		KeyBound budgets = new KeyBound(BOUND, 64, "rate-limit.memory.max-budget-keys");
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(this.clock, rateLimits);
		CostBudgets costBudgets = new CostBudgets(new InMemoryBudgetStore(this.clock, budgets), null, this.keys);
		RateLimitPolicy perIp = RateLimitPolicy.builder("per-ip").capacity(2).refill("1/1h").build();
		RateLimitPolicy perUser = RateLimitPolicy.builder("per-user").capacity(2).refill("1/1h").build();
		BudgetPolicy daily = budget(FailureMode.CLOSED);
		try (CapturedLog log = CapturedLog.of(KeyBound.class)) {
			for (int i = 0; i < BOUND + 50; i++) {
				this.clock.advanceMicros(1);
				backend.tryConsume(perIp, "ip-" + i, 1);
				backend.tryConsume(perUser, "user-" + i, 1);
				reserveAndSettle(costBudgets, daily, "tenant-" + i, 1);
			}
			assertThat(rateLimits.of("per-ip").overflowDecisions()).isEqualTo(50);
			assertThat(rateLimits.of("per-user").overflowDecisions()).isEqualTo(50);
			assertThat(budgets.of(daily.name()).overflowDecisions()).isEqualTo(50);
			assertThat(log.warnings()).hasSize(3);
			assertThat(log.warnings()).filteredOn((message) -> message.contains("rate-limit 'per-ip'"))
				.singleElement(as(InstanceOfAssertFactories.STRING))
				.contains("holds 100 keys that still matter", "new keys now share 64 overflow slots", "none passes the limit")
				.contains("Raise rate-limit.memory.max-keys");
			assertThat(log.warnings()).filteredOn((message) -> message.contains("budget 'tenant-daily'"))
				.singleElement(as(InstanceOfAssertFactories.STRING))
				.contains("Raise rate-limit.memory.max-budget-keys");
		}
	}

	@Test
	void oneFloodedPolicyNeitherEvictsNorCrowdsOutAnother() {
		RateLimitPolicy perUser = RateLimitPolicy.builder("per-user").capacity(2).refill("1/1h").build();
		RateLimitPolicy perIp = RateLimitPolicy.builder("per-ip").capacity(2).refill("1/1h").build();
		exhaust(perIp, "203.0.113.7");
		for (int i = 0; i < FLOOD; i++) {
			this.clock.advanceMicros(1);
			this.backend.tryConsume(perUser, "user-" + i, 1);
		}
		assertThat(this.backend.tryConsume(perIp, "203.0.113.7", 1).allowed()).isFalse();
		// per-ip has a bound of its own: new addresses are still tracked.
		assertThat(this.backend.tryConsume(perIp, "198.51.100.1", 1).allowed()).isTrue();
		assertThat(this.bound.of("per-ip").count()).isEqualTo(2);
		assertThat(this.bound.of("per-user").count()).isEqualTo(BOUND);
	}

	/**
	 * Once a flood stops, newcomers get entries of their own again as soon as
	 * there is room, even while others keep a slot in use: a slot holds only the
	 * keys that spent on it. Here four new users a second, one call each, would
	 * keep a slot limited to 2 a second exhausted for ever.
	 */
	@Test
	void afterAFloodNewcomersGetEntriesOfTheirOwnAgainWhileOthersKeepTheSlotBusy() {
		KeyBound small = new KeyBound(5, 1, null);
		InMemoryRateLimitBackend store = new InMemoryRateLimitBackend(this.clock, small);
		RateLimitPolicy policy = RateLimitPolicy.builder("trickle").capacity(2).refill("2/1s").build();
		for (int i = 0; i < 10; i++) {
			store.tryConsume(policy, "flood-" + i, 2);
		}
		assertThat(small.of("trickle").overflowDecisions()).isEqualTo(5);
		int refusedAfterTheFlood = 0;
		for (int i = 0; i < 240; i++) {
			this.clock.advance(Duration.ofMillis(250));
			boolean allowed = store.tryConsume(policy, "user-" + i, 1).allowed();
			// The flood's keys are fresh again after a second, and swept at the next new key.
			if (i >= 8 && !allowed) {
				refusedAfterTheFlood++;
			}
		}
		assertThat(refusedAfterTheFlood).as("newcomers refused on their first call once the store had room")
			.isZero();
	}

	/**
	 * Keys on different plans (or overrides) of one policy may share a slot:
	 * whatever the plan whose numbers the slot's state was last decided with, a
	 * key is decided within its own plan, never past it, and never with an error
	 * (which an open policy would take for an outage and let through).
	 */
	@ParameterizedTest(name = "{0}")
	@MethodSource("everyAlgorithm")
	void aKeyOnASlotAnotherPlanFilledIsAdmittedAtMostItsOwnLimit(Algorithm algorithm) {
		KeyBound small = new KeyBound(1, 1, null);
		InMemoryRateLimitBackend store = new InMemoryRateLimitBackend(this.clock, small);
		RateLimiter limiter = new RateLimiter(store, this.keys, Sleeper.system(), null, LimitListener.NONE);
		RateLimitPolicy free = policy(algorithm, FailureMode.OPEN);
		RateLimitPolicy pro = free.toBuilder(free.name()).capacity(1_000).build();
		limiter.tryAcquire(List.of(new LimitRequest(free, "holder", 1)));
		this.clock.advanceMicros(1);
		limiter.tryAcquire(List.of(new LimitRequest(pro, "pro-tenant", 1)));
		int admitted = 0;
		for (int i = 0; i < 100; i++) {
			if (limiter.tryAcquire(List.of(new LimitRequest(free, "free-tenant", 1))).allowed()) {
				admitted++;
			}
		}
		assertThat(admitted).as("free tenant admitted of 100 at one instant").isLessThanOrEqualTo(2);
	}

	/**
	 * A reservation taken on a slot that expires before it is settled is charged
	 * where its tenant decides when the settle comes, never to a state the tenant
	 * left: the tenant's spend in a day stays within its budget.
	 */
	@Test
	void aLateSettleOfAReservationOnASlotIsChargedWhereItsTenantDecides() {
		InMemoryBudgetStore store = new InMemoryBudgetStore(this.clock, new KeyBound(1, 1, null));
		BudgetPolicy daily = BudgetPolicy.builder("daily").limit("day", "1.00").reservationTimeout(Duration.ofMinutes(1))
			.build();
		store.reserve(daily, "other", "o1", 10_000);
		assertThat(store.reserve(daily, "tenant", "t1", 1_000_000).allowed()).isTrue();
		this.clock.advance(Duration.ofMinutes(2));
		long spent = 0;
		if (store.reserve(daily, "tenant", "t2", 100_000).allowed()) {
			store.settle(daily, "tenant", "t2", 100_000);
			spent += 100_000;
		}
		store.settle(daily, "tenant", "t1", 1_000_000);
		spent += 1_000_000;
		if (store.reserve(daily, "tenant", "t3", 900_000).allowed()) {
			store.settle(daily, "tenant", "t3", 900_000);
			spent += 900_000;
		}
		assertThat(spent).as("spent by the tenant in one day of 1.00").isLessThanOrEqualTo(1_100_000);
	}

	@Test
	void keysThatAreFreshAgainMakeRoomAtTheNextSweep() {
		RateLimitPolicy policy = RateLimitPolicy.builder("p").capacity(2).refill("2/1s").build();
		for (int i = 0; i < BOUND; i++) {
			this.backend.tryConsume(policy, "k" + i, 2);
		}
		// At the bound the newcomer shares a slot; after 1 s every bucket is full again, slots too.
		this.backend.tryConsume(policy, "newcomer", 1);
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(this.backend.tryConsume(policy, "newcomer", 1).allowed()).isTrue();
		assertThat(this.bound.dropped()).isEqualTo(BOUND);
		assertThat(this.backend.size()).isEqualTo(1);
	}

	@Test
	void aLayeredCallChargesEveryPolicyWhenOneHoldsItsBound() {
		RateLimitPolicy full = RateLimitPolicy.builder("full").capacity(1).refill("1/1h").build();
		RateLimitPolicy roomy = RateLimitPolicy.builder("roomy").capacity(1).refill("1/1h").build();
		RateLimiter limiter = new RateLimiter(this.backend, this.keys);
		for (int i = 0; i < BOUND; i++) {
			limiter.tryAcquire(List.of(new LimitRequest(full, "u" + i, 1)));
		}
		RateLimitOutcome first = limiter
			.tryAcquire(List.of(new LimitRequest(full, "new", 1), new LimitRequest(roomy, "new", 1)));
		assertThat(first.allowed()).isTrue();
		assertThat(first.decisions()).extracting((pd) -> pd.policy().name()).containsExactly("full", "roomy");
		RateLimitOutcome second = limiter
			.tryAcquire(List.of(new LimitRequest(full, "new", 1), new LimitRequest(roomy, "new", 1)));
		assertThat(second.allowed()).isFalse();
		assertThat(second.violatedPolicies()).containsExactly("full", "roomy");
	}

	private RateLimitOutcome acquire(RateLimiter limiter, RateLimitPolicy policy, String key) {
		this.clock.advanceMicros(1);
		return limiter.tryAcquire(List.of(new LimitRequest(policy, key, 1)));
	}

	/** Takes from a key until it is refused; the shaping bucket refuses once its queue is full. */
	private int exhaust(RateLimiter limiter, RateLimitPolicy policy, String key) {
		for (int i = 0; i < 10; i++) {
			if (!acquire(limiter, policy, key).allowed()) {
				return i;
			}
		}
		throw new AssertionError(policy.name() + " never refused " + key);
	}

	private void exhaust(RateLimitPolicy policy, String key) {
		for (int i = 0; i < 10; i++) {
			Decision decision = this.backend.tryConsume(policy, key, 1);
			if (!decision.allowed()) {
				return;
			}
		}
		throw new AssertionError(policy.name() + " never refused " + key);
	}

	private static void reserveAndSettle(CostBudgets budgets, BudgetPolicy budget, String key, long micros) {
		try {
			budgets.reserve(budget, key, micros).settle(micros);
		}
		catch (BudgetExceededException ex) {
			// A fresh key refused early: its slot is spent.
		}
	}

	private static void tryAcquire(ConcurrencyLimiter limiter, ConcurrencyPolicy cap, String key,
			List<Permit> into) {
		try {
			into.add(limiter.acquire(cap, key));
		}
		catch (ConcurrencyLimitExceededException ex) {
			// A fresh key refused early: its slot's permits are held.
		}
	}

	private static RateLimitPolicy policy(Algorithm algorithm, FailureMode mode) {
		RateLimitPolicy.Builder builder = RateLimitPolicy.builder(algorithm.name().toLowerCase().replace('_', '-'))
			.algorithm(algorithm)
			.capacity(2)
			.failureMode(mode);
		return switch (algorithm) {
			case TOKEN_BUCKET, LEAKY_BUCKET, LEAKY_BUCKET_SHAPING -> builder.refill("1/1h").build();
			default -> builder.window("1h").build();
		};
	}

	private static BudgetPolicy budget(FailureMode mode) {
		return BudgetPolicy.builder("tenant-daily").limit("day", "1.00").failureMode(mode).build();
	}

	private static ConcurrencyPolicy cap(FailureMode mode, ConcurrencyPolicy.Scope scope) {
		return ConcurrencyPolicy.builder("cap").permits(2).failureMode(mode).scope(scope).build();
	}

	/**
	 * Returns a store that cannot answer, as Redis in an outage: every call of
	 * the store's type throws. Where it keeps keys is no call: one part, as a
	 * single server.
	 */
	private static <T> T unavailable(Class<T> type) {
		InvocationHandler down = (proxy, method, args) -> switch (method.getName()) {
			case "equals" -> proxy == args[0];
			case "hashCode" -> System.identityHashCode(proxy);
			case "toString" -> "unavailable " + type.getSimpleName();
			case "parts" -> StoreParts.ONE;
			default -> throw new IllegalStateException("Redis is down");
		};
		return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] { type }, down));
	}

}
