package dev.ratelimit.core;

import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.concurrency.ConcurrencyPolicy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A limit's definition (plans, key overrides, exemption) and its live form:
 * which variant decides a call, what a run-time override changes, and that a
 * refused change changes nothing.
 */
class LiveLimitTests {

	private static final RateLimitPolicy RUNS = RateLimitPolicy.builder("runs")
		.capacity(5)
		.refill("1/1s")
		.key("header('X-User-Id')")
		.build();

	private static final LimitDefinition<RateLimitPolicy> PLANNED = new LimitDefinition<>(RUNS, "@plans.of(#user)",
			"free", Map.of("free", quota(5L, "1/1s"), "pro", quota(50L, "10/1s")),
			Map.of("partner", quota(500L, null)), Exemption.NONE);

	@Test
	void keyOverrideWinsOverThePlanAndUnknownPlansTakeTheDefault() {
		assertThat(PLANNED.select("pro", "someone").capacity()).isEqualTo(50);
		assertThat(PLANNED.select("pro", "partner").capacity()).isEqualTo(500);
		assertThat(PLANNED.select("pro", "partner").refill()).isEqualTo(Refill.parse("1/1s"));
		assertThat(PLANNED.select("gold", "someone").capacity()).isEqualTo(5);
		assertThat(PLANNED.select(null, null).capacity()).isEqualTo(5);
		assertThat(PLANNED.select("pro", "someone").name()).isEqualTo("runs");
		assertThat(PLANNED.select("pro", "someone").key()).isEqualTo("header('X-User-Id')");
		assertThat(PLANNED.isPlain()).isFalse();
		assertThat(LimitDefinition.of(RUNS).isPlain()).isTrue();
	}

	@Test
	void overrideOfAPlanChangesThatPlanOnlyAndRemovingItRestoresIt() {
		LiveLimit<RateLimitPolicy> live = new LiveLimit<>(PLANNED);
		live.override("pro", quota(80L, null));
		assertThat(live.current().select("pro", "x").capacity()).isEqualTo(80);
		assertThat(live.current().select("pro", "x").refill()).isEqualTo(Refill.parse("10/1s"));
		assertThat(live.current().select("free", "x").capacity()).isEqualTo(5);
		assertThat(live.overrides()).containsOnlyKeys("pro");
		assertThat(live.removeOverride("pro")).isTrue();
		assertThat(live.removeOverride("pro")).isFalse();
		assertThat(live.current().select("pro", "x").capacity()).isEqualTo(50);
	}

	@Test
	void refusedOverrideChangesNothing() {
		LiveLimit<RateLimitPolicy> live = new LiveLimit<>(PLANNED);
		live.override("", quota(7L, null));
		LimitDefinition<RateLimitPolicy> before = live.current();
		assertThatExceptionOfType(PolicyValidationException.class)
			.isThrownBy(() -> live.override("gold", quota(9L, null)))
			.withMessageContaining("gold")
			.withMessageContaining("[free, pro]");
		assertThatExceptionOfType(PolicyValidationException.class)
			.isThrownBy(() -> live.override("pro", quota(-1L, null)));
		assertThatExceptionOfType(PolicyValidationException.class)
			.isThrownBy(() -> live.override("", new Quota(null, null, null, null, 3)))
			.withMessageContaining("has no permits");
		assertThat(live.current()).isSameAs(before);
		assertThat(live.overrides()).containsOnlyKeys("");
	}

	@Test
	void reconfigureKeepsTheOverridesThatStillFitAndDropsTheOthers() {
		LiveLimit<RateLimitPolicy> live = new LiveLimit<>(PLANNED);
		live.override("pro", quota(80L, null));
		live.override("free", quota(8L, null));
		LimitDefinition<RateLimitPolicy> withoutPro = new LimitDefinition<>(RUNS.withQuota(quota(6L, null)),
				"@plans.of(#user)", "free", Map.of("free", quota(6L, "1/1s")), Map.of(), Exemption.NONE);
		Map<String, Quota> dropped = live.reconfigure(withoutPro);
		assertThat(dropped).containsOnlyKeys("pro");
		assertThat(live.overrides()).containsOnlyKeys("free");
		assertThat(live.current().select("free", "x").capacity()).isEqualTo(8);
		assertThat(live.configured()).isSameAs(withoutPro);
	}

	@Test
	void eachKindTakesItsOwnNumbersOnly() {
		BudgetPolicy daily = BudgetPolicy.builder("daily").limit("day", "1.00").build();
		assertThat(daily.withQuota(new Quota(null, null, null, 2_500_000L, null)).limits().get(0).amountMicros())
			.isEqualTo(2_500_000L);
		assertThatExceptionOfType(PolicyValidationException.class)
			.isThrownBy(() -> daily.withQuota(quota(3L, null)))
			.withMessageContaining("has no capacity; use amount");
		ConcurrencyPolicy cap = ConcurrencyPolicy.builder("cap").permits(2).build();
		assertThat(cap.withQuota(new Quota(null, null, null, null, 9)).permits()).isEqualTo(9);
		RateLimitPolicy window = RateLimitPolicy.builder("w").algorithm(Algorithm.FIXED_WINDOW).capacity(3)
			.window("1m")
			.build();
		assertThat(window.withQuota(new Quota(null, null, 30_000_000L, null, null)).windowMicros())
			.isEqualTo(30_000_000L);
		assertThatExceptionOfType(PolicyValidationException.class)
			.isThrownBy(() -> window.withQuota(quota(null, "1/1s")))
			.withMessageContaining("has a window, not a refill");
		assertThatExceptionOfType(PolicyValidationException.class)
			.isThrownBy(() -> RUNS.withQuota(new Quota(null, null, 1_000_000L, null, null)))
			.withMessageContaining("has a refill, not a window");
	}

	@Test
	void definitionChecksItsPlans() {
		assertThatExceptionOfType(PolicyValidationException.class)
			.isThrownBy(() -> new LimitDefinition<>(RUNS, "#plan", "gold", Map.of("free", quota(1L, null)),
					Map.of(), Exemption.NONE))
			.withMessageContaining("default-plan");
		assertThatExceptionOfType(PolicyValidationException.class)
			.isThrownBy(() -> new LimitDefinition<>(RUNS, null, null, Map.of("free", quota(1L, null)), Map.of(),
					Exemption.NONE))
			.withMessageContaining("no plan expression");
		assertThatExceptionOfType(PolicyValidationException.class)
			.isThrownBy(() -> new LimitDefinition<>(RUNS, "#plan", "free", Map.of("free", quota(0L, null)),
					Map.of(), Exemption.NONE))
			.satisfies((ex) -> assertThat(ex.getAttribute()).isEqualTo("plans.free.capacity"));
	}

	@Test
	void exemptionCoversItsRangesOnly() {
		Exemption exemption = new Exemption(List.of(CidrRange.parse("10.0.0.0/8"), CidrRange.parse("2001:db8::/32")),
				Set.of(), null);
		assertThat(exemption.covers(new byte[] { 10, 1, 2, 3 })).isTrue();
		assertThat(exemption.covers(new byte[] { 11, 1, 2, 3 })).isFalse();
		assertThat(exemption.covers(null)).isFalse();
		assertThat(exemption.isNone()).isFalse();
		assertThat(new Exemption(List.of(), Set.of(), "  ").isNone()).isTrue();
	}

	private static Quota quota(Long capacity, String refill) {
		return new Quota(capacity, (refill != null) ? Refill.parse(refill) : null, null, null, null);
	}

}
