package dev.ratelimit.plans;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Exemption;
import dev.ratelimit.core.LimitDefinition;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.LimitListener.DecisionSource;
import dev.ratelimit.core.Quota;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Refill;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Recent callers by the plan whose variant decided their calls, counted from
 * the listener's rich event without allocating.
 */
class RecentCallersTests {

	private final RecentCallers callers = new RecentCallers(new ManualTimeSource(), Duration.ofMinutes(5));

	private final LimitDefinition<RateLimitPolicy> runs = new LimitDefinition<>(
			RateLimitPolicy.builder("agent-runs").capacity(5).refill(Refill.parse("5/1m")).build(), "header('X-Plan')",
			"free", Map.of("free", new Quota(10L, null, null, null, null), "pro", new Quota(90L, null, null, null, null)),
			Map.of("partner", new Quota(500L, null, null, null, null)), Exemption.NONE);

	@Test
	void callsCountForThePlanThatDecidedThemAndListedKeysForTheLimitsOwn() {
		decide(this.runs.select("free", "ann"), "rl:{agent-runs}:ann");
		decide(this.runs.select(null, "bob"), "rl:{agent-runs}:bob");
		decide(this.runs.select("free", "bob"), "rl:{agent-runs}:bob");
		decide(this.runs.select("pro", "cid"), "rl:{agent-runs}:cid");
		decide(this.runs.select("pro", "partner"), "rl:{agent-runs}:partner");
		// An unkeyed call is nobody's.
		decide(this.runs.select("pro", null), null);

		assertThat(this.callers.counted(LimitKind.RATE_LIMIT, "agent-runs").byPlan()).containsExactly(Map.entry("free", 2L), Map.entry("pro", 1L),
				Map.entry("", 1L));
		assertThat(this.callers.counted(LimitKind.RATE_LIMIT, "other").byPlan()).isEmpty();
		assertThat(this.callers.counted(LimitKind.RATE_LIMIT, "other").counted()).isEqualTo("this instance");
	}

	@Test
	void aDecisionAllocatesNothingOnceItsPlanWasSeen() {
		com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory
			.getThreadMXBean();
		RateLimitPolicy free = this.runs.select("free", null);
		RateLimitPolicy pro = this.runs.select("pro", null);
		String[] keys = new String[500];
		for (int i = 0; i < keys.length; i++) {
			keys[i] = "rl:{agent-runs}:user-" + i;
			decide(free, keys[i]);
			decide(pro, keys[i]);
		}
		long allocated = 0;
		// Measured in the last of three rounds: the first ones run while the JIT compiles the path.
		for (int measured = 0; measured < 3; measured++) {
			long before = threads.getCurrentThreadAllocatedBytes();
			for (int round = 0; round < 100; round++) {
				for (String key : keys) {
					decide(free, key);
					decide(pro, key);
				}
			}
			allocated = threads.getCurrentThreadAllocatedBytes() - before;
		}
		assertThat(allocated).as("bytes allocated by 100,000 decisions").isLessThan(1_000);
	}

	private void decide(RateLimitPolicy variant, String key) {
		this.callers.decided(variant, key, 1, true, 1, variant.capacity(), DecisionSource.STORE);
	}

}
