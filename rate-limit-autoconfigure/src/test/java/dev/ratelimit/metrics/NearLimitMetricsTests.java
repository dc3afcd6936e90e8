package dev.ratelimit.metrics;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.ratelimit.Limits;
import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.budget.Amounts;
import dev.ratelimit.budget.BudgetExceededException;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.budget.InMemoryBudgetStore;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.LimitListener.DecisionSource;
import dev.ratelimit.core.LimitRequest;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.Sleeper;
import dev.ratelimit.memory.InMemoryRateLimitBackend;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@code rate.limit.near.limit}: allowed decisions that left their key less
 * than the near-limit share of its allowance, counted before the callers are
 * refused, while the decisions are counted exactly as before.
 */
class NearLimitMetricsTests {

	private final ManualTimeSource clock = new ManualTimeSource();

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final RateLimitPolicy policy = RateLimitPolicy.builder("per-user").capacity(10).refill("1/1h").build();

	@Test
	void rateLimitDecisionsThatLeaveLessThanTwentyPercentAreNearTheLimit() {
		RateLimiter limiter = limiter(new MicrometerLimitListener(() -> this.meters));
		for (int i = 0; i < 11; i++) {
			limiter.tryAcquire(List.of(new LimitRequest(this.policy, "ann", 1, true)));
		}
		// 9 .. 2 left are 20% or more of 10; 1 and 0 left are not; the 11th is refused.
		assertThat(nearLimit("rate-limit", "per-user")).isEqualTo(2);
		assertThat(decisions("per-user", "allowed")).isEqualTo(10);
		assertThat(decisions("per-user", "denied")).isEqualTo(1);
	}

	@Test
	void nearLimitShareIsConfigurable() {
		RateLimiter limiter = limiter(new MicrometerLimitListener(() -> this.meters, 50));
		for (int i = 0; i < 10; i++) {
			limiter.tryAcquire(List.of(new LimitRequest(this.policy, "ann", 1, true)));
		}
		// Less than 5 of 10 left: 4, 3, 2, 1 and 0.
		assertThat(nearLimit("rate-limit", "per-user")).isEqualTo(5);
	}

	@Test
	void budgetReservationsThatLeaveLessThanTwentyPercentAreNearTheLimit() {
		BudgetPolicy budget = BudgetPolicy.builder("tenant-daily")
			.limit("day", "1.00")
			.reservationTimeout(Duration.ofMinutes(5))
			.build();
		CostBudgets budgets = new CostBudgets(new InMemoryBudgetStore(this.clock, 1_000), null,
				new LimitKeys("rl", 128), new MicrometerLimitListener(() -> this.meters));
		String key = "acme";
		budgets.reserve(budget, key, Amounts.parseMicros("0.70"));
		assertThat(nearLimit("budget", "tenant-daily")).isZero();
		budgets.reserve(budget, key, Amounts.parseMicros("0.15"));
		assertThat(nearLimit("budget", "tenant-daily")).isOne();
		try {
			budgets.reserve(budget, key, Amounts.parseMicros("0.50"));
		}
		catch (BudgetExceededException expected) {
			// Refused: over the limit, no longer near it.
		}
		assertThat(nearLimit("budget", "tenant-daily")).isOne();
		assertThat(this.meters.get(MicrometerLimitListener.DECISIONS).tag("policy", "tenant-daily")
			.tag("outcome", "denied").counter().count()).isOne();
	}

	@Test
	void onlyAllowedDecisionsOfTheStoreOrTheLocalFallbackWithAKnownRemainderCount() {
		MicrometerLimitListener listener = new MicrometerLimitListener(() -> this.meters);
		listener.decided(this.policy, "rl:per-user:{ann}", 1, true, 1, 10, DecisionSource.STORE);
		listener.decided(this.policy, "rl:per-user:{ann}", 1, true, 1, 10, DecisionSource.LOCAL_FALLBACK);
		listener.decided(this.policy, "rl:per-user:{ann}", 1, true, 1, 10, DecisionSource.SHADOW);
		listener.decided(this.policy, "rl:per-user:{ann}", 1, false, 0, 10, DecisionSource.STORE);
		listener.decided(this.policy, "rl:per-user:{ann}", 1, true, -1, 10, DecisionSource.STORE);
		listener.decided(this.policy, "rl:per-user:{ann}", 1, true, 0, 0, DecisionSource.STORE);
		assertThat(nearLimit("rate-limit", "per-user")).isEqualTo(2);
		// The decisions themselves are counted as the short form always counted them, once each.
		assertThat(decisions("per-user", "allowed")).isEqualTo(3);
		assertThat(decisions("per-user", "denied")).isOne();
		assertThat(this.meters.find(MicrometerLimitListener.DECISIONS).tag("outcome", "shadow").counter()).isNull();
	}

	@Test
	void capsCannotSayWhatIsLeftAndAreNeverNearTheLimit() {
		MicrometerLimitListener listener = new MicrometerLimitListener(() -> this.meters);
		Limit cap = ConcurrencyPolicy.builder("provider").permits(1).build();
		listener.decided(cap, "ann", 1, true, -1, -1, DecisionSource.STORE);
		assertThat(this.meters.find(MicrometerLimitListener.NEAR_LIMIT).counter()).isNull();
		assertThat(this.meters.get(MicrometerLimitListener.DECISIONS).tag("kind", "concurrency").counter().count())
			.isOne();
	}

	@Test
	void exactlyTheShareLeftIsNotNearAndHugeAllowancesDoNotOverflow() {
		MicrometerLimitListener listener = new MicrometerLimitListener(() -> this.meters);
		listener.decided(this.policy, "k", 1, true, 20, 100, DecisionSource.STORE);
		assertThat(nearLimit("rate-limit", "per-user")).isZero();
		listener.decided(this.policy, "k", 1, true, 19, 100, DecisionSource.STORE);
		assertThat(nearLimit("rate-limit", "per-user")).isOne();
		// remaining * 100 overflows a long here: 10% left is near, half left is not.
		listener.decided(this.policy, "k", 1, true, Long.MAX_VALUE / 10, Long.MAX_VALUE, DecisionSource.STORE);
		listener.decided(this.policy, "k", 1, true, Long.MAX_VALUE / 2, Long.MAX_VALUE, DecisionSource.STORE);
		assertThat(nearLimit("rate-limit", "per-user")).isEqualTo(2);
	}

	@Test
	void admittedDecisionsAllocateNothingOnceTheirCountersExist() {
		MicrometerLimitListener listener = new MicrometerLimitListener(() -> this.meters);
		com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory
			.getThreadMXBean();
		long thread = Thread.currentThread().getId();
		// Registers both counters, and lets the measurement itself warm up.
		for (int i = 0; i < 20_000; i++) {
			listener.decided(this.policy, "k", 1, true, i % 2, 10, DecisionSource.STORE);
			threads.getThreadAllocatedBytes(thread);
		}
		long before = threads.getThreadAllocatedBytes(thread);
		for (int i = 0; i < 100_000; i++) {
			listener.decided(this.policy, "k", 1, true, i % 2, 10, DecisionSource.STORE);
		}
		long allocated = threads.getThreadAllocatedBytes(thread) - before;
		// 100,000 calls: a single allocation per call would be 1.6 MB at least.
		assertThat(allocated).isLessThan(1_000);
		assertThat(nearLimit("rate-limit", "per-user")).isEqualTo(120_000);
	}

	@Test
	void nearLimitOutsideOneToNinetyNineIsRefused() {
		assertThatIllegalArgumentException().isThrownBy(() -> new MicrometerLimitListener(() -> this.meters, 0))
			.withMessage("nearLimitPercent must be between 1 and 99: 0");
		assertThatIllegalArgumentException().isThrownBy(() -> new MicrometerLimitListener(() -> this.meters, 100));
	}

	@Test
	void propertySetsTheShareOfTheStartersListener() {
		ApplicationContextRunner runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class))
			.withBean(SimpleMeterRegistry.class)
			.withPropertyValues("rate-limit.policies.api.capacity=4", "rate-limit.policies.api.refill=1/1h");
		// 80% by default: less than 0.8 of 4 left is 0 only; at 50%, less than 2: 1 and 0.
		runner.run((context) -> assertThat(takeAll(context.getBean(Limits.class), context.getBean(
				SimpleMeterRegistry.class))).isOne());
		runner.withPropertyValues("rate-limit.metrics.near-limit=50")
			.run((context) -> assertThat(takeAll(context.getBean(Limits.class),
					context.getBean(SimpleMeterRegistry.class))).isEqualTo(2));
	}

	private static double takeAll(Limits limits, SimpleMeterRegistry meters) {
		for (int i = 0; i < 4; i++) {
			limits.acquire("api", "ann");
		}
		return meters.get(MicrometerLimitListener.NEAR_LIMIT).tag("policy", "api").counter().count();
	}

	private RateLimiter limiter(MicrometerLimitListener listener) {
		return new RateLimiter(new InMemoryRateLimitBackend(this.clock, 1_000), new LimitKeys("rl", 128),
				Sleeper.system(), null, listener);
	}

	private double nearLimit(String kind, String policy) {
		Counter counter = this.meters.find(MicrometerLimitListener.NEAR_LIMIT)
			.tag("kind", kind)
			.tag("policy", policy)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	private double decisions(String policy, String outcome) {
		Counter counter = this.meters.find(MicrometerLimitListener.DECISIONS)
			.tag("policy", policy)
			.tag("outcome", outcome)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

}
