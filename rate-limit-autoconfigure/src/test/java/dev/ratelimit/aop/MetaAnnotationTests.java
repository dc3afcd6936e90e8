package dev.ratelimit.aop;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.AliasFor;

import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;
import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.budget.BudgetExceededException;
import dev.ratelimit.concurrency.ConcurrencyLimitExceededException;
import dev.ratelimit.core.RateLimitExceededException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A team's own annotation, meta-annotated with one of the three, applies
 * wherever it is put, for every kind: {@code @PerUser} carrying
 * {@code @RateLimited("agent-runs")}, {@code @TenantSpend} carrying a
 * {@code @CostBudget}, {@code @SingleFlight} carrying a {@code @Concurrency}.
 */
class MetaAnnotationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class))
		.withUserConfiguration(Services.class)
		.withPropertyValues("rate-limit.policies.agent-runs.capacity=2",
				"rate-limit.policies.agent-runs.refill=2/1h", "rate-limit.budgets.spend.amount=1.00",
				"rate-limit.budgets.spend.key=#tenant");

	@Test
	void aMetaAnnotatedRateLimitApplies() {
		this.contextRunner.run((context) -> {
			Agent agent = context.getBean(Agent.class);
			agent.run();
			agent.run();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(agent::run)
				.satisfies((ex) -> assertThat(ex.getViolatedPolicies()).containsExactly("agent-runs"));
		});
	}

	@Test
	void aMetaAnnotatedBudgetAppliesWithTheAttributesItSets() {
		this.contextRunner.run((context) -> {
			Agent agent = context.getBean(Agent.class);
			agent.spend("acme");
			agent.spend("acme");
			assertThatExceptionOfType(BudgetExceededException.class).isThrownBy(() -> agent.spend("acme"));
			// the key came from the meta-annotation's own attribute: another tenant has its own budget
			agent.spend("globex");
		});
	}

	@Test
	void aMetaAnnotatedConcurrencyCapApplies() {
		this.contextRunner.run((context) -> {
			Agent agent = context.getBean(Agent.class);
			CountDownLatch inside = new CountDownLatch(1);
			CountDownLatch release = new CountDownLatch(1);
			Thread holder = new Thread(() -> agent.singleFlight(inside, release));
			holder.start();
			assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
			try {
				assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
					.isThrownBy(() -> agent.singleFlight(new CountDownLatch(1), new CountDownLatch(0)));
			}
			finally {
				release.countDown();
				holder.join(10_000);
			}
		});
	}

	@Target({ ElementType.METHOD, ElementType.ANNOTATION_TYPE })
	@Retention(RetentionPolicy.RUNTIME)
	@RateLimited("agent-runs")
	@interface PerUser {

	}

	@Target(ElementType.METHOD)
	@Retention(RetentionPolicy.RUNTIME)
	@CostBudget(value = "spend", estimate = "0.40")
	@interface TenantSpend {

		/** The key of the budget, passed on to {@code @CostBudget}. */
		@AliasFor(annotation = CostBudget.class, attribute = "key")
		String key();

	}

	@Target(ElementType.METHOD)
	@Retention(RetentionPolicy.RUNTIME)
	@Concurrency(permits = "1")
	@interface SingleFlight {

	}

	@Configuration(proxyBeanMethods = false)
	static class Services {

		@Bean
		Agent agent() {
			return new Agent();
		}

	}

	static class Agent {

		@PerUser
		public void run() {
		}

		@TenantSpend(key = "#tenant")
		public void spend(String tenant) {
		}

		@SingleFlight
		public void singleFlight(CountDownLatch inside, CountDownLatch release) {
			inside.countDown();
			try {
				release.await(10, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

}
