package dev.ratelimit.core;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.OnError;
import dev.ratelimit.concurrency.ConcurrencyPolicy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

/**
 * What every kind of limit holds is written once, in {@link AbstractLimit}: the
 * same rules for the name, key, failure mode and visibility of a rate-limit
 * policy, a budget and a concurrency cap, and only the default failure mode
 * differs.
 */
class AbstractLimitTests {

	@Test
	void commonSettersReturnTheKindsBuilderSoThatKindSettersChainAfterThem() {
		RateLimitPolicy policy = RateLimitPolicy.builder("p")
			.key("ip")
			.failureMode(FailureMode.LOCAL)
			.visibility(Visibility.PUBLIC)
			.capacity(10)
			.refill("1/1s")
			.build();
		BudgetPolicy budget = BudgetPolicy.builder("b")
			.key("principal")
			.failureMode(FailureMode.OPEN)
			.visibility(Visibility.INTERNAL)
			.limit("day", "5.00")
			.onError(OnError.RELEASE)
			.build();
		ConcurrencyPolicy cap = ConcurrencyPolicy.builder("c")
			.key("header('X-Tenant')")
			.failureMode(FailureMode.CLOSED)
			.visibility(Visibility.PUBLIC)
			.permits(2)
			.maxWait(Duration.ofMillis(5))
			.build();
		assertThat(List.<Limit>of(policy, budget, cap)).extracting(Limit::key, Limit::failureMode, Limit::visibility)
			.extracting((values) -> values.toList())
			.containsExactly(List.of("ip", FailureMode.LOCAL, Visibility.PUBLIC),
					List.of("principal", FailureMode.OPEN, Visibility.INTERNAL),
					List.of("header('X-Tenant')", FailureMode.CLOSED, Visibility.PUBLIC));
	}

	@Test
	void budgetsFailClosedByDefaultTheOtherKindsLocal() {
		List<Limit> limits = List.of(RateLimitPolicy.builder("p").capacity(1).refill("1/1s").build(),
				BudgetPolicy.builder("b").limit("day", "1.00").build(),
				ConcurrencyPolicy.builder("c").permits(1).build());
		// No kind turns unlimited by default when its store cannot answer.
		assertThat(limits).extracting(Limit::failureMode)
			.containsExactly(FailureMode.LOCAL, FailureMode.CLOSED, FailureMode.LOCAL);
		assertThat(limits).noneMatch(Limit::failsOpen);
		assertThat(limits).extracting(Limit::key).containsOnly(AbstractLimit.DEFAULT_KEY);
		assertThat(limits).extracting(Limit::visibility).containsOnly(Visibility.AUTO);
	}

	@Test
	void failsOpenOnlyWhereAStoreOutageWouldRemoveTheLimit() {
		RateLimitPolicy.Builder open = RateLimitPolicy.builder("p").capacity(1).refill("1/1s")
			.failureMode(FailureMode.OPEN);
		ConcurrencyPolicy.Builder cap = ConcurrencyPolicy.builder("c").permits(1).failureMode(FailureMode.OPEN);
		assertThat(open.build().failsOpen()).isTrue();
		assertThat(BudgetPolicy.builder("b").limit("day", "1.00").failureMode(FailureMode.OPEN).build().failsOpen())
			.isTrue();
		assertThat(cap.scope(ConcurrencyPolicy.Scope.DISTRIBUTED).build().failsOpen()).isTrue();
		// A shadow policy never limits, and a local cap never asks a store.
		assertThat(open.shadow(true).build().failsOpen()).isFalse();
		assertThat(cap.scope(ConcurrencyPolicy.Scope.LOCAL).build().failsOpen()).isFalse();
		assertThat(open.shadow(false).failureMode(FailureMode.LOCAL).build().failsOpen()).isFalse();
		assertThat(open.failureMode(FailureMode.CLOSED).build().failsOpen()).isFalse();
	}

	@Test
	void blankKeysMeanGlobalAndKeysAreStrippedForEveryKind() {
		assertThat(RateLimitPolicy.builder("p").capacity(1).refill("1/1s").key(" ").build().key()).isEqualTo("global");
		assertThat(BudgetPolicy.builder("b").limit("day", "1.00").key(null).build().key()).isEqualTo("global");
		assertThat(ConcurrencyPolicy.builder("c").permits(1).key(" ip ").build().key()).isEqualTo("ip");
	}

	@Test
	void everyKindRejectsTheSameNamesAndNullValues() {
		assertThatExceptionOfType(PolicyValidationException.class).isThrownBy(() -> RateLimitPolicy.builder("a b"))
			.satisfies((ex) -> assertThat(ex.getAttribute()).isEqualTo("name"));
		assertThatExceptionOfType(PolicyValidationException.class).isThrownBy(() -> BudgetPolicy.builder("a b"))
			.satisfies((ex) -> assertThat(ex.getAttribute()).isEqualTo("name"));
		assertThatExceptionOfType(PolicyValidationException.class).isThrownBy(() -> ConcurrencyPolicy.builder("a b"))
			.satisfies((ex) -> assertThat(ex.getAttribute()).isEqualTo("name"));
		assertThatNullPointerException().isThrownBy(() -> BudgetPolicy.builder("b").failureMode(null))
			.withMessage("failureMode");
		assertThatNullPointerException().isThrownBy(() -> ConcurrencyPolicy.builder("c").visibility(null))
			.withMessage("visibility");
	}

	@Test
	void copiesKeepTheCommonValues() {
		// Open is no kind's default, so a copy that lost the value would show.
		BudgetPolicy budget = BudgetPolicy.builder("b")
			.limit("day", "1.00")
			.key("ip")
			.failureMode(FailureMode.OPEN)
			.visibility(Visibility.PUBLIC)
			.build()
			.toBuilder()
			.build();
		ConcurrencyPolicy cap = ConcurrencyPolicy.builder("c")
			.permits(1)
			.key("ip")
			.failureMode(FailureMode.OPEN)
			.visibility(Visibility.PUBLIC)
			.build()
			.toBuilder()
			.build();
		RateLimitPolicy policy = RateLimitPolicy.builder("p")
			.capacity(1)
			.refill("1/1s")
			.key("ip")
			.failureMode(FailureMode.OPEN)
			.visibility(Visibility.PUBLIC)
			.build();
		assertThat(policy.toBuilder("q").build()).satisfies((copy) -> {
			assertThat(copy.name()).isEqualTo("q");
			assertThat(copy).isEqualTo(policy.toBuilder("q").build()).isNotEqualTo(policy);
		});
		assertThat(List.<Limit>of(budget, cap, policy.toBuilder("q").build()))
			.extracting(Limit::key, Limit::failureMode, Limit::visibility)
			.extracting((values) -> values.toList())
			.containsOnly(List.of("ip", FailureMode.OPEN, Visibility.PUBLIC));
		assertThat(budget.name()).isEqualTo("b");
		assertThat(cap.name()).isEqualTo("c");
	}

}
