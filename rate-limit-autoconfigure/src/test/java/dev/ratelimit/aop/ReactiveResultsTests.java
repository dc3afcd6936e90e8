package dev.ratelimit.aop;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.LimitRegistry;
import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.concurrency.ConcurrencyLimitExceededException;
import dev.ratelimit.concurrency.LocalConcurrencyLimiter;
import dev.ratelimit.key.KeyContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Reactor's {@link Mono} and {@link Flux} end when they complete, fail or are
 * cancelled: the permit is held until then, and the budget settled with the
 * value.
 */
class ReactiveResultsTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class))
		.withUserConfiguration(Services.class)
		.withPropertyValues("rate-limit.budgets.spend.amount=1.00", "rate-limit.concurrency.one.permits=1");

	@Test
	void aMonoHoldsItsPermitUntilItCompletesAndSettlesWithItsValue() {
		this.contextRunner.run((context) -> {
			Provider provider = context.getBean(Provider.class);
			Sinks.One<Map<String, Object>> answer = Sinks.one();
			Mono<Map<String, Object>> call = provider.complete(answer.asMono());
			Disposable subscription = call.subscribe();
			assertThat(inUse(context)).isEqualTo(1);
			assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
				.isThrownBy(() -> provider.complete(Mono.never()));
			answer.tryEmitValue(Map.of("cost", new BigDecimal("0.15")));
			assertThat(inUse(context)).isZero();
			assertThat(spend(context).spentMicros()).containsExactly(150_000);
			assertThat(spend(context).reservedMicros()).isZero();
			subscription.dispose();
		});
	}

	@Test
	void aCancelledFluxGivesItsPermitBackAndFollowsTheOnErrorRule() {
		this.contextRunner.run((context) -> {
			Provider provider = context.getBean(Provider.class);
			Disposable subscription = provider.stream(Flux.interval(Duration.ofHours(1))).subscribe();
			assertThat(inUse(context)).isEqualTo(1);
			subscription.dispose();
			assertThat(inUse(context)).isZero();
			// keep: the estimate, since the stream may have cost money before it was cancelled
			assertThat(spend(context).spentMicros()).containsExactly(500_000);
		});
	}

	@Test
	void aFailedMonoFollowsTheOnErrorRule() {
		this.contextRunner.run((context) -> {
			Provider provider = context.getBean(Provider.class);
			provider.complete(Mono.error(new IllegalStateException("provider down"))).onErrorComplete().block();
			assertThat(inUse(context)).isZero();
			assertThat(spend(context).spentMicros()).containsExactly(500_000);
		});
	}

	private static int inUse(org.springframework.context.ApplicationContext context) {
		return context.getBean(LocalConcurrencyLimiter.class)
			.inUse(context.getBean(LimitRegistry.class).concurrency().find("one").orElseThrow(), KeyContext.GLOBAL);
	}

	private static BudgetDecision spend(org.springframework.context.ApplicationContext context) {
		return context.getBean(CostBudgets.class)
			.remaining(context.getBean(LimitRegistry.class).budgets().find("spend").orElseThrow(), KeyContext.GLOBAL);
	}

	@Configuration(proxyBeanMethods = false)
	static class Services {

		@Bean
		Provider provider() {
			return new Provider();
		}

	}

	static class Provider {

		@CostBudget(value = "spend", estimate = "0.50", actual = "#result['cost']")
		@Concurrency("one")
		public Mono<Map<String, Object>> complete(Mono<Map<String, Object>> answer) {
			return answer;
		}

		@CostBudget(value = "spend", estimate = "0.50")
		@Concurrency("one")
		public Flux<Long> stream(Flux<Long> tokens) {
			return tokens;
		}

	}

}
