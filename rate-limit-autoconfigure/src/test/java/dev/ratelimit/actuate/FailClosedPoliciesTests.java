package dev.ratelimit.actuate;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.RateLimitPolicy;

import static org.assertj.core.api.Assertions.assertThat;

class FailClosedPoliciesTests {

	@Test
	void onlyPoliciesThatRefuseCallsWhileRedisIsDownAreListed() {
		List<RateLimitPolicy> rateLimits = List.of(rateLimit("open", FailureMode.OPEN, false),
				rateLimit("closed", FailureMode.CLOSED, false), rateLimit("local", FailureMode.LOCAL, false),
				rateLimit("closed-shadow", FailureMode.CLOSED, true));
		List<BudgetPolicy> budgets = List.of(budget("default", null), budget("open-budget", FailureMode.OPEN));
		List<ConcurrencyPolicy> concurrency = List.of(
				cap("shared-closed", ConcurrencyPolicy.Scope.DISTRIBUTED, FailureMode.CLOSED),
				cap("shared-open", ConcurrencyPolicy.Scope.DISTRIBUTED, FailureMode.OPEN),
				cap("local-closed", ConcurrencyPolicy.Scope.LOCAL, FailureMode.CLOSED));

		FailClosedPolicies failClosed = new FailClosedPolicies(new LimitRegistry(rateLimits, budgets, concurrency));

		assertThat(failClosed.isEmpty()).isFalse();
		assertThat(failClosed.names()).containsExactly(Map.entry("rateLimits", List.of("closed")),
				Map.entry("budgets", List.of("default")),
				Map.entry("concurrency", List.of("shared-closed")));
	}

	@Test
	void withEveryPolicyFailingOpenNoneIsListed() {
		FailClosedPolicies failClosed = new FailClosedPolicies(new LimitRegistry(
				List.of(rateLimit("open", FailureMode.OPEN, false)), List.of(budget("open-budget", FailureMode.OPEN)),
				List.of()));
		assertThat(failClosed.isEmpty()).isTrue();
		assertThat(failClosed.names()).isEmpty();
	}

	private static RateLimitPolicy rateLimit(String name, FailureMode mode, boolean shadow) {
		return RateLimitPolicy.builder(name).capacity(10).refill("10/1s").failureMode(mode).shadow(shadow).build();
	}

	private static BudgetPolicy budget(String name, FailureMode mode) {
		BudgetPolicy.Builder builder = BudgetPolicy.builder(name).limit("day", "1.00");
		return (mode != null) ? builder.failureMode(mode).build() : builder.build();
	}

	private static ConcurrencyPolicy cap(String name, ConcurrencyPolicy.Scope scope, FailureMode mode) {
		return ConcurrencyPolicy.builder(name).permits(2).scope(scope).failureMode(mode).build();
	}

}
