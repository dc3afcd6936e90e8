package dev.ratelimit.plans;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.core.LimitDefinition;
import dev.ratelimit.core.Quota;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Refill;
import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.support.StartupFailures;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Plans, key overrides and exemptions from configuration: a limit defined by its
 * plans alone, and a clear start-up error for each mistake, naming the property.
 */
class PlanConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class))
		.withPropertyValues("rate-limit.policies.runs.key=header('X-User-Id')",
				"rate-limit.policies.runs.plan=@plans.of(#user)", "rate-limit.policies.runs.default-plan=free",
				"rate-limit.policies.runs.plans.free.capacity=5", "rate-limit.policies.runs.plans.free.refill=1/1s",
				"rate-limit.policies.runs.plans.pro.capacity=50", "rate-limit.policies.runs.plans.pro.refill=10/1s");

	@Test
	void limitDefinedByItsPlansTakesTheDefaultPlansNumbers() {
		this.contextRunner.withPropertyValues("rate-limit.policies.runs.overrides.[partner.key-1].capacity=500")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				LimitDefinition<RateLimitPolicy> runs = context.getBean(LimitRegistry.class)
					.rateLimits()
					.live("runs")
					.orElseThrow()
					.current();
				assertThat(runs.limit().capacity()).isEqualTo(5);
				assertThat(runs.planQuotas()).containsOnlyKeys("free", "pro");
				assertThat(runs.select("pro", "someone").capacity()).isEqualTo(50);
				assertThat(runs.select("pro", "someone").refill()).isEqualTo(Refill.parse("10/1s"));
				assertThat(runs.select(null, "partner.key-1").capacity()).isEqualTo(500);
				assertThat(runs.select(null, "partner.key-1").refill()).isEqualTo(Refill.parse("1/1s"));
				assertThat(runs.keyQuotas()).containsEntry("partner.key-1",
						new Quota(500L, null, null, null, null));
			});
	}

	@Test
	void defaultPlanThatIsNotAPlanIsAStartupError() {
		this.contextRunner.withPropertyValues("rate-limit.policies.runs.default-plan=gold")
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains("rate-limit.policies.runs.default-plan")
				.contains("gold")
				.contains("[free, pro]"));
	}

	@Test
	void plansWithoutAPlanExpressionAreAStartupError() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class))
			.withPropertyValues("rate-limit.policies.runs.capacity=5", "rate-limit.policies.runs.refill=1/1s",
					"rate-limit.policies.runs.plans.pro.capacity=50")
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains("rate-limit.policies.runs.plan")
				.contains("no plan expression"));
	}

	@Test
	void unparsablePlanExpressionIsAStartupError() {
		this.contextRunner.withPropertyValues("rate-limit.policies.runs.plan=@plans.of(#user")
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains("rate-limit.policies.runs.plan")
				.contains("@plans.of(#user"));
	}

	@Test
	void aNumberTheKindDoesNotHaveIsAStartupError() {
		this.contextRunner.withPropertyValues("rate-limit.policies.runs.plans.pro.permits=3")
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains("rate-limit.policies.runs.plans.pro.permits")
				.contains("has no permits"));
	}

	@Test
	void anInvalidPlanNumberIsAStartupError() {
		this.contextRunner.withPropertyValues("rate-limit.policies.runs.plans.pro.capacity=-1")
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains("rate-limit.policies.runs.plans.pro.capacity")
				.contains("-1"));
	}

	@Test
	void anInvalidOverrideNumberIsAStartupError() {
		this.contextRunner.withPropertyValues("rate-limit.policies.runs.overrides.partner.capacity=0")
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains("rate-limit.policies.runs.overrides.partner.capacity"));
	}

	@Test
	void aBadExemptRangeIsAStartupError() {
		this.contextRunner.withPropertyValues("rate-limit.policies.runs.exempt.cidrs=10.0.0.0/8,internal")
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains("rate-limit.policies.runs.exempt.cidrs[1]")
				.contains("internal"));
	}

	@Test
	void anUnparsableExemptConditionIsAStartupError() {
		this.contextRunner.withPropertyValues("rate-limit.policies.runs.exempt.when=header('X-Internal' ==")
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains("rate-limit.policies.runs.exempt.when"));
	}

	@Test
	void aFixedCostAPlanCouldNeverAllowIsAStartupError() {
		this.contextRunner.withPropertyValues("rate-limit.policies.runs.default-plan=pro")
			.withBean(CostlyRuns.class)
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains(CostlyRuns.class.getName() + ".run()")
				.contains("cost 10 is outside 0..5")
				.contains("one of its plans or listed keys"));
	}

	@Test
	void aChangeThatWouldNotFitAFixedCostIsRefusedWhereTheCostIsAndOnlyThere() {
		this.contextRunner.withPropertyValues("rate-limit.policies.runs.default-plan=pro",
				"rate-limit.policies.runs.plans.free.capacity=10")
			.withBean(CostlyRuns.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				dev.ratelimit.core.LiveLimit<RateLimitPolicy> live = context.getBean(LimitRegistry.class)
					.rateLimits()
					.live("runs")
					.orElseThrow();
				dev.ratelimit.aop.LimitAnnotations annotations = context
					.getBean(dev.ratelimit.aop.LimitAnnotations.class);
				var bound = annotations.resolve(CostlyRuns.class.getMethod("run", String.class), CostlyRuns.class)
					.rateLimits()
					.get(0);
				live.override("free", new Quota(4L, null, null, null, null));
				// The limit changed; the method whose cost no free caller could pay keeps the numbers it had.
				assertThat(live.current().select("free", "x").capacity()).isEqualTo(4);
				assertThat(bound.applied().definition().select("free", "x").capacity()).isEqualTo(10);
			});
	}

	static class CostlyRuns {

		@dev.ratelimit.RateLimited(value = "runs", cost = "10")
		public void run(String user) {
		}

	}

	@Test
	void budgetAndCapPlansTakeTheirOwnNumbers() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class))
			.withPropertyValues("rate-limit.budgets.daily.window=day", "rate-limit.budgets.daily.plan=#plan",
					"rate-limit.budgets.daily.default-plan=free", "rate-limit.budgets.daily.plans.free.amount=1",
					"rate-limit.budgets.daily.plans.pro.amount=25.50", "rate-limit.concurrency.runs.plan=#plan",
					"rate-limit.concurrency.runs.default-plan=free", "rate-limit.concurrency.runs.plans.free.permits=5",
					"rate-limit.concurrency.runs.plans.pro.permits=50",
					"rate-limit.concurrency.runs.plans.pro.capacity=50")
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains("rate-limit.concurrency.runs.plans.pro.capacity")
				.contains("has no capacity; use permits"));
	}

}
