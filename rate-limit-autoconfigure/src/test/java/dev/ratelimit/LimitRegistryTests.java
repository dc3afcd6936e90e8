package dev.ratelimit;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.RateLimitPolicy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * One registry for the three kinds of limit: configuration order, and one
 * limit per name across kinds.
 */
class LimitRegistryTests {

	@Test
	void everyKindComesBackInConfigurationOrder() {
		List<RateLimitPolicy> rateLimits = new ArrayList<>();
		for (String name : List.of("zeta", "alpha", "mu", "beta", "omega", "kappa", "delta", "pi")) {
			rateLimits.add(RateLimitPolicy.builder(name).capacity(1).refill("1/1s").build());
		}
		List<BudgetPolicy> budgets = List.of(budget("yearly"), budget("daily"), budget("monthly"));
		List<ConcurrencyPolicy> caps = List.of(cap("z-cap"), cap("a-cap"));

		LimitRegistry registry = new LimitRegistry(rateLimits, budgets, caps);

		assertThat(registry.rateLimits().names()).containsExactly("zeta", "alpha", "mu", "beta", "omega", "kappa",
				"delta", "pi");
		assertThat(registry.rateLimits().all()).containsExactlyElementsOf(rateLimits);
		assertThat(registry.budgets().names()).containsExactly("yearly", "daily", "monthly");
		assertThat(registry.concurrency().names()).containsExactly("z-cap", "a-cap");
		assertThat(registry.all()).extracting(Limit::name)
			.containsExactly("zeta", "alpha", "mu", "beta", "omega", "kappa", "delta", "pi", "yearly", "daily",
					"monthly", "z-cap", "a-cap");
	}

	@Test
	void aNameUsedByTwoKindsIsRefusedNamingBothPlaces() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new LimitRegistry(List.of(RateLimitPolicy.builder("provider").capacity(1).refill("1/1s")
				.build()), List.of(), List.of(cap("provider"))))
			.withMessageContaining("rate-limit.policies.provider")
			.withMessageContaining("rate-limit.concurrency.provider");
	}

	@Test
	void aNameIsFoundWhateverItsKind() {
		LimitRegistry registry = new LimitRegistry(List.of(), List.of(budget("daily")), List.of(cap("provider")));
		assertThat(registry.find("daily")).hasValueSatisfying((limit) -> assertThat(limit.kind())
			.isEqualTo(LimitKind.BUDGET));
		assertThat(registry.find("provider")).hasValueSatisfying((limit) -> assertThat(limit.kind())
			.isEqualTo(LimitKind.CONCURRENCY));
		assertThat(registry.find("nope")).isEmpty();
	}

	private static BudgetPolicy budget(String name) {
		return BudgetPolicy.builder(name).limit("day", "1.00").build();
	}

	private static ConcurrencyPolicy cap(String name) {
		return ConcurrencyPolicy.builder(name).permits(1).build();
	}

}
