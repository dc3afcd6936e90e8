package dev.ratelimit.plans;

import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Exemption;
import dev.ratelimit.core.LimitDefinition;
import dev.ratelimit.core.Quota;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Refill;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Whom a change of a definition reaches, by the numbers each caller is decided
 * by before and after it; and which plan decided a call, from the variant.
 */
class ChangeReachTests {

	private static final Quota FREE = new Quota(10L, Refill.parse("10/1m"), null, null, null);

	private static final Quota PRO_CAPACITY_ONLY = new Quota(100L, null, null, null, null);

	private final RateLimitPolicy limit = RateLimitPolicy.builder("agent-runs")
		.capacity(5)
		.refill(Refill.parse("5/1m"))
		.build();

	private final LimitDefinition<RateLimitPolicy> planned = new LimitDefinition<>(this.limit, "header('X-Plan')",
			"free", Map.of("free", FREE, "pro", PRO_CAPACITY_ONLY), Map.of("partner", PRO_CAPACITY_ONLY),
			Exemption.NONE);

	@Test
	void theLimitsOwnNumbersReachOnlyThePlansAndKeysThatDoNotSetThem() {
		ChangeReach capacity = ChangeReach.between(this.planned,
				this.planned.overriddenBy(Map.of("", new Quota(2L, null, null, null, null))));
		assertThat(capacity.isEmpty()).isTrue();

		ChangeReach refill = ChangeReach.between(this.planned,
				this.planned.overriddenBy(Map.of("", new Quota(null, Refill.parse("1/1s"), null, null, null))));
		assertThat(refill.plans()).containsExactly("pro");
		assertThat(refill.keys()).containsExactly("partner");
	}

	@Test
	void aPlansOverrideReachesThatPlanAndAnEqualOneNobody() {
		assertThat(ChangeReach.between(this.planned,
				this.planned.overriddenBy(Map.of("free", new Quota(1L, null, null, null, null)))).plans())
			.containsExactly("free");
		assertThat(ChangeReach.between(this.planned, this.planned.overriddenBy(Map.of("free", FREE))).isEmpty())
			.isTrue();
	}

	@Test
	void withoutPlansTheLimitsOwnNumbersReachEveryCaller() {
		LimitDefinition<RateLimitPolicy> plain = LimitDefinition.of(this.limit);
		ChangeReach reach = ChangeReach.between(plain,
				plain.overriddenBy(Map.of("", new Quota(2L, null, null, null, null))));
		assertThat(reach.plans()).containsExactly(ChangeReach.OWN);
		assertThat(ChangeReach.targets(plain)).containsExactly(ChangeReach.OWN);
	}

	@Test
	void eachPlansVariantSaysItsPlanAndOnlyThePlansDo() {
		assertThat(this.planned.select("pro", null).plan()).isEqualTo("pro");
		assertThat(this.planned.select(null, "someone").plan()).isEqualTo("free");
		assertThat(this.planned.select("pro", "partner").plan()).isNull();
		assertThat(this.planned.limit().plan()).isNull();
		// A label, not a number: a plan's variant equals the same numbers without it.
		assertThat(this.planned.select("free", null)).isEqualTo(this.limit.withQuota(FREE));
		// What a place changes on the limit (its key, here) keeps the plans' names.
		assertThat(this.planned.withLimit((limit) -> limit.toBuilder(limit.name()).key("header('X-Team')").build())
			.select("pro", null)
			.plan()).isEqualTo("pro");
	}

}
