package dev.ratelimit.metrics;

import java.lang.management.ManagementFactory;
import java.lang.reflect.Method;
import java.util.List;
import java.util.function.Consumer;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.ratelimit.actuate.RateLimitActuatorAutoConfiguration;
import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.concurrency.Priority;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.LimitListener;
import dev.ratelimit.core.LimitListener.DecisionSource;
import dev.ratelimit.core.RateLimitException;
import dev.ratelimit.core.RateLimitKeyMissingException;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.insight.HeavyHitters;
import dev.ratelimit.plans.RecentCallers;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 31's rule for the listeners the starter registers: an admitted
 * decision allocates nothing in any of them, with every one present (meters
 * with near-limit, heavy hitters, recent callers, traces with a registry but no
 * current observation) and keys new and old. The same holds for what the three
 * kinds count besides decisions: a budget's charge (every admitted budgeted
 * call), an adaptive cap's shed and a fallback method's call (every refusal of
 * a flood).
 */
class AdmittedDecisionAllocationTests {

	private static final int KEYS = 5_000;

	@Test
	void everyListenerTheStarterRegistersHearsAnAdmittedDecisionWithoutAllocating() {
		runWithEveryListener((all) -> {
			RateLimitPolicy policy = RateLimitPolicy.builder("api").capacity(100).refill("100/1s").build();
			LimitKeys keys = new LimitKeys("rl", 128);
			String[] storageKeys = new String[KEYS];
			for (int i = 0; i < KEYS; i++) {
				storageKeys[i] = keys.build("api", "caller-" + i);
			}
			long fewest = fewestBytes(() -> {
				for (int i = 0; i < 100_000; i++) {
					// Mostly a few busy callers, and a stream of others the sketches have not tracked.
					String key = storageKeys[(i % 4 == 0) ? i % KEYS : i % 16];
					all.decided(policy, key, 1, true, 50, 100, DecisionSource.STORE);
					// Near the limit: counted by the near-limit meter too.
					all.decided(policy, key, 1, true, 5, 100, DecisionSource.STORE);
				}
			});
			assertThat(fewest).as("bytes allocated by 200,000 admitted decisions, warm").isLessThan(1_024);
		});
	}

	@Test
	void chargesShedsAndFallbacksAreCountedWithoutAllocating() throws NoSuchMethodException {
		BudgetPolicy budget = BudgetPolicy.builder("tenant").limit("day", "5.00").build();
		ConcurrencyPolicy cap = ConcurrencyPolicy.builder("provider").permits(4).build();
		Method fallback = AdmittedDecisionAllocationTests.class.getDeclaredMethod("fallback");
		RateLimitException refusal = new RateLimitKeyMissingException("tenant", "#tenant");
		runWithEveryListener((all) -> {
			long fewest = fewestBytes(() -> {
				for (int i = 0; i < 100_000; i++) {
					all.charged(budget, 1_000);
					// Named as the adaptive cap names it when it sheds.
					all.shed(cap, ((i % 2 == 0) ? Priority.SHEDDABLE : Priority.NORMAL).label(), (i % 3 == 0));
					all.fallbackCalled(fallback, refusal);
				}
			});
			assertThat(fewest).as("bytes allocated by 100,000 charges, sheds and fallbacks each, warm")
				.isLessThan(1_024);
		});
	}

	private static void runWithEveryListener(Consumer<LimitListener> test) {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class,
					RateLimitActuatorAutoConfiguration.class))
			.withBean(SimpleMeterRegistry.class)
			.withBean(ObservationRegistry.class, ObservationRegistry::create)
			.withPropertyValues("rate-limit.policies.api.capacity=100", "rate-limit.policies.api.refill=100/1s",
					"management.endpoints.web.exposure.include=ratelimits")
			.run((context) -> {
				List<LimitListener> listeners = context.getBeanProvider(LimitListener.class).orderedStream().toList();
				assertThat(listeners).hasAtLeastOneElementOfType(MicrometerLimitListener.class)
					.hasAtLeastOneElementOfType(HeavyHitters.class)
					.hasAtLeastOneElementOfType(RecentCallers.class)
					.hasAtLeastOneElementOfType(ObservationLimitListener.class);
				test.accept(LimitListener.of(listeners));
			});
	}

	/**
	 * The fewest bytes one run of {@code work} allocated, over rounds until the JIT
	 * has compiled it (escape analysis removes what the interpreter allocates); a
	 * busy CI machine compiles late, so the warm-up is bounded by rounds, not
	 * fixed. An allocation on the path itself shows in every round.
	 */
	private static long fewestBytes(Runnable work) {
		com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory
			.getThreadMXBean();
		long fewest = Long.MAX_VALUE;
		for (int round = 0; round < 40 && fewest >= 1_024; round++) {
			long before = threads.getCurrentThreadAllocatedBytes();
			work.run();
			fewest = Math.min(fewest, threads.getCurrentThreadAllocatedBytes() - before);
		}
		return fewest;
	}

	/** Stands for a limited method's fallback. */
	@SuppressWarnings("unused")
	private static String fallback() {
		return "later";
	}

}
