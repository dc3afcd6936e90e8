package dev.ratelimit.autoconfigure;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.aop.Advisor;
import org.springframework.aop.aspectj.annotation.AnnotationAwareAspectJAutoProxyCreator;
import org.springframework.aop.framework.autoproxy.AbstractAdvisorAutoProxyCreator;
import org.springframework.aop.framework.autoproxy.InfrastructureAdvisorAutoProxyCreator;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.ApplicationContextAssertProvider;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.Limits;
import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;
import dev.ratelimit.budget.BudgetExceededException;
import dev.ratelimit.budget.BudgetStore;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.aop.AnnotatedBeans;
import dev.ratelimit.aop.LimitAnnotations;
import dev.ratelimit.aop.LimitInterceptor;
import dev.ratelimit.aop.RateLimitedMethodsValidator;
import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.memory.InMemoryRateLimitBackend;
import dev.ratelimit.metrics.MicrometerLimitListener;
import dev.ratelimit.prefetch.PrefetchingBackend;
import dev.ratelimit.redis.RedisBudgetStore;
import dev.ratelimit.redis.RedisLimiterConnection;
import dev.ratelimit.redis.RedisRateLimitBackend;
import dev.ratelimit.resilience.DenyCachingBackend;
import dev.ratelimit.web.servlet.RateLimitExceptionResolver;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.core.NamedLimits;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.support.StartupFailures;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class RateLimitAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class));

	@Test
	void runWithDefaultsShouldUseTheInMemoryBackend() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(RateLimiter.class);
			assertThat(context).getBean(RateLimitBackend.class).isInstanceOf(InMemoryRateLimitBackend.class);
			assertThat(context).hasSingleBean(LimitInterceptor.class);
			assertThat(context).doesNotHaveBean(RateLimitExceptionResolver.class);
		});
	}

	@Test
	void runWhenDisabledShouldCreateNothing() {
		this.contextRunner.withPropertyValues("rate-limit.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimiter.class)
				.doesNotHaveBean(LimitInterceptor.class));
	}

	@Test
	void runWithUserBackendShouldBackOff() {
		this.contextRunner.withUserConfiguration(UserBackendConfiguration.class)
			.withPropertyValues("rate-limit.backend=redis")
			.run((context) -> assertThat(context).getBean(RateLimitBackend.class)
				.isSameAs(context.getBean(UserBackendConfiguration.class).backend));
	}

	@Test
	void runWithRedisBackendShouldUseTheApplicationsConnectionFactory() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withPropertyValues("rate-limit.backend=redis")
			.run((context) -> {
				// The limiter's own connection is not a second RedisConnectionFactory bean.
				assertThat(context).hasSingleBean(RedisConnectionFactory.class);
				assertThat(context).hasSingleBean(RedisLimiterConnection.class);
				assertThat(context.getBean(RedisLimiterConnection.class).connectionFactory())
					.isNotSameAs(context.getBean(RedisConnectionFactory.class));
			});
	}

	@Test
	void runWithRedisBackendShouldPutTheDenyCacheInFrontUnlessDisabled() {
		ApplicationContextRunner redis = this.contextRunner
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withPropertyValues("rate-limit.backend=redis");
		redis.run((context) -> assertThat(context).getBean(RateLimitBackend.class)
			.isInstanceOf(DenyCachingBackend.class));
		redis.withPropertyValues("rate-limit.redis.deny-cache.enabled=false")
			.run((context) -> assertThat(context).getBean(RateLimitBackend.class)
				.isInstanceOf(RedisRateLimitBackend.class));
	}

	@Test
	void runWithoutBudgetsShouldCreateNoBudgetBeans() {
		this.contextRunner.run((context) -> assertThat(context).hasNotFailed()
			.doesNotHaveBean(CostBudgets.class)
			.doesNotHaveBean(BudgetStore.class)
			.hasSingleBean(Limits.class)
			.hasSingleBean(LimitInterceptor.class));
		this.contextRunner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withPropertyValues("rate-limit.backend=redis")
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(CostBudgets.class)
				.doesNotHaveBean(BudgetStore.class));
	}

	@Test
	void runWithABudgetShouldCreateTheBudgetBeansOfTheBackend() {
		String[] budget = { "rate-limit.budgets.daily.unit=USD", "rate-limit.budgets.daily.amount=1.00",
				"rate-limit.budgets.daily.window=day" };
		this.contextRunner.withPropertyValues(budget)
			.run((context) -> assertThat(context).hasSingleBean(CostBudgets.class).doesNotHaveBean(BudgetStore.class));
		this.contextRunner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withPropertyValues("rate-limit.backend=redis")
			.withPropertyValues(budget)
			.run((context) -> {
				assertThat(context).hasSingleBean(CostBudgets.class);
				assertThat(context).getBean(BudgetStore.class).isInstanceOf(RedisBudgetStore.class);
			});
	}

	@Test
	void theApiRefusesABudgetNameWhenNoBudgetIsConfigured() {
		this.contextRunner.run((context) -> assertThatIllegalArgumentException()
			.isThrownBy(() -> context.getBean(Limits.class).reserve("daily", "k", "0.10")));
	}

	@Test
	void runWithAPrefetchingPolicyOnRedisShouldPrefetchInsideTheDenyCache() {
		ApplicationContextRunner redis = this.contextRunner
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withPropertyValues("rate-limit.backend=redis", "rate-limit.redis.deny-cache.enabled=false",
					"rate-limit.policies.hot.capacity=1000",
					"rate-limit.policies.hot.refill=1000/1s");
		redis.run((context) -> assertThat(context).getBean(RateLimitBackend.class)
			.isInstanceOf(RedisRateLimitBackend.class));
		redis.withPropertyValues("rate-limit.policies.hot.prefetch=50")
			.run((context) -> assertThat(context).getBean(RateLimitBackend.class)
				.isInstanceOf(PrefetchingBackend.class));
	}

	@Test
	void runWithAPrefetchLargerThanTheCapacityShouldNameTheProperty() {
		this.contextRunner
			.withPropertyValues("rate-limit.policies.hot.capacity=100", "rate-limit.policies.hot.refill=100/1s",
					"rate-limit.policies.hot.prefetch=500")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("rate-limit.policies.hot.prefetch")
				.contains("must not exceed the capacity (100)"));
	}

	@Test
	void runWithNonPositivePrefetchMaxKeysShouldNameTheProperty() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withPropertyValues("rate-limit.backend=redis", "rate-limit.policies.hot.capacity=100",
					"rate-limit.policies.hot.refill=100/1s", "rate-limit.policies.hot.prefetch=10",
					"rate-limit.redis.prefetch.max-keys=0")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("rate-limit.redis.prefetch.max-keys"));
	}

	@Test
	void runWithABusyTimeoutShorterThanTheTimeoutShouldNameBoth() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withPropertyValues("rate-limit.backend=redis", "rate-limit.redis.timeout=500ms",
					"rate-limit.redis.busy-timeout=200ms")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("rate-limit.redis.busy-timeout")
				.contains("must be at least rate-limit.redis.timeout (PT0.5S)"));
	}

	@Test
	void runWithNonPositiveRedisTimeoutShouldNameTheProperty() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withPropertyValues("rate-limit.backend=redis", "rate-limit.redis.timeout=0ms")
			.run((context) -> assertThat(analyze(context).getDescription()).contains("rate-limit.redis.timeout"));
	}

	@Test
	void runWithNonPositiveRedisConnectTimeoutShouldNameTheProperty() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withPropertyValues("rate-limit.backend=redis", "rate-limit.redis.connect-timeout=-1s")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("rate-limit.redis.connect-timeout"));
	}

	@Test
	void runWithShadowAndLocalPoliciesShouldBindThem() {
		this.contextRunner
			.withPropertyValues("rate-limit.policies.p.capacity=8", "rate-limit.policies.p.refill=8/1s",
					"rate-limit.policies.p.failure-mode=local", "rate-limit.policies.p.local-instances=4",
					"rate-limit.policies.s.capacity=1", "rate-limit.policies.s.refill=1/1s",
					"rate-limit.policies.s.shadow=true")
			.run((context) -> {
				NamedLimits<RateLimitPolicy> policies = context.getBean(LimitRegistry.class).rateLimits();
				assertThat(policies.find("p")).hasValueSatisfying((policy) -> {
					assertThat(policy.failureMode()).isEqualTo(FailureMode.LOCAL);
					assertThat(policy.localShare().capacity()).isEqualTo(2);
				});
				assertThat(policies.find("s")).hasValueSatisfying((policy) -> assertThat(policy.shadow()).isTrue());
			});
	}

	@Test
	void runWithZeroLocalInstancesShouldNameTheProperty() {
		this.contextRunner
			.withPropertyValues("rate-limit.policies.p.capacity=8", "rate-limit.policies.p.refill=8/1s",
					"rate-limit.policies.p.local-instances=0")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("rate-limit.policies.p.local-instances"));
	}

	@Test
	void runWithRedisBackendAndNoConnectionFactoryShouldFailWithAClearMessage() {
		this.contextRunner.withPropertyValues("rate-limit.backend=redis")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("rate-limit.backend=redis but no RedisConnectionFactory bean exists"));
	}

	@Test
	void runWithRedisBackendAndNoSpringDataRedisShouldFailWithAClearMessage() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(RedisConnectionFactory.class))
			.withPropertyValues("rate-limit.backend=redis")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription()).contains("Spring Data Redis is not on the classpath");
				assertThat(analysis.getAction()).contains("spring-boot-starter-data-redis");
			});
	}

	@Test
	void runWithNamedPoliciesShouldBindThemWithPlaceholders() {
		this.contextRunner
			.withPropertyValues("limits.burst=7", "rate-limit.policies.api.capacity=${limits.burst}",
					"rate-limit.policies.api.refill=7/1s", "rate-limit.policies.api.key=header('X-Api-Key')")
			.run((context) -> {
				NamedLimits<RateLimitPolicy> policies = context.getBean(LimitRegistry.class).rateLimits();
				assertThat(policies.find("api")).hasValueSatisfying((policy) -> {
					assertThat(policy.capacity()).isEqualTo(7);
					assertThat(policy.key()).isEqualTo("header('X-Api-Key')");
				});
			});
	}

	@Test
	void runWithWindowPoliciesShouldBindAlgorithmAndWindow() {
		this.contextRunner
			.withPropertyValues("rate-limit.policies.daily.algorithm=fixed-window",
					"rate-limit.policies.daily.capacity=10000", "rate-limit.policies.daily.window=1d",
					"rate-limit.policies.exact.algorithm=sliding-window-log", "rate-limit.policies.exact.capacity=30",
					"rate-limit.policies.exact.window=PT1M")
			.run((context) -> {
				NamedLimits<RateLimitPolicy> policies = context.getBean(LimitRegistry.class).rateLimits();
				assertThat(policies.find("daily")).hasValueSatisfying((policy) -> {
					assertThat(policy.algorithm()).isEqualTo(Algorithm.FIXED_WINDOW);
					assertThat(policy.windowMicros()).isEqualTo(86_400_000_000L);
				});
				assertThat(policies.find("exact")).hasValueSatisfying(
						(policy) -> assertThat(policy.windowMicros()).isEqualTo(60_000_000L));
			});
	}

	@Test
	void runWithWindowAlgorithmAndRefillShouldNameTheProperty() {
		this.contextRunner
			.withPropertyValues("rate-limit.policies.daily.algorithm=fixed-window",
					"rate-limit.policies.daily.capacity=100", "rate-limit.policies.daily.refill=1/1s")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("rate-limit.policies.daily.window")
				.contains("must be set for fixed-window"));
	}

	@Test
	void inlineWindowPolicyIsEnforced() {
		this.contextRunner.withUserConfiguration(InlineWindowConfiguration.class).run((context) -> {
			InlineWindowService service = context.getBean(InlineWindowService.class);
			service.work();
			service.work();
			assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(service::work)
				.satisfies((ex) -> assertThat(ex.getViolatedPolicies()).containsExactly("InlineWindowService.work"));
		});
	}

	@Test
	void decisionsAreCountedInMicrometerByPolicyAndOutcome() {
		this.contextRunner.withUserConfiguration(InlineConfiguration.class)
			.withBean(SimpleMeterRegistry.class)
			.withPropertyValues("inline.capacity=1")
			.run((context) -> {
				InlineService service = context.getBean(InlineService.class);
				service.work("a");
				assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> service.work("a"));
				MeterRegistry registry = context.getBean(MeterRegistry.class);
				assertThat(registry.get("rate.limit.decisions").tag("policy", "inline-work").tag("outcome", "allowed")
					.counter().count()).isEqualTo(1);
				assertThat(registry.get("rate.limit.decisions").tag("policy", "inline-work").tag("outcome", "denied")
					.counter().count()).isEqualTo(1);
				assertThat(registry.get("rate.limit.store.latency").tag("kind", "rate-limit").tag("outcome", "success")
					.timer().count()).isEqualTo(2);
			});
	}

	@Test
	void budgetsAndConcurrencyCapsAreMeasured() {
		this.contextRunner.withUserConfiguration(MeteredConfiguration.class)
			.withBean(SimpleMeterRegistry.class)
			.withPropertyValues("rate-limit.budgets.daily.amount=1.00", "rate-limit.budgets.daily.unit=USD")
			.run((context) -> {
				MeteredService service = context.getBean(MeteredService.class);
				MeterRegistry registry = context.getBean(MeterRegistry.class);
				assertThat(service.spend(registry)).isEqualTo(1.0);
				service.spend(registry);
				assertThatExceptionOfType(BudgetExceededException.class).isThrownBy(() -> service.spend(registry));
				assertThat(registry.get("rate.limit.budget.spent").tag("budget", "daily").counter().count())
					.isEqualTo(0.8);
				// One listener for every kind: the budget's refusal and the cap's permits are decisions too.
				assertThat(registry.get("rate.limit.decisions").tag("kind", "budget").tag("policy", "daily")
					.tag("outcome", "denied").counter().count()).isEqualTo(1);
				assertThat(registry.get("rate.limit.decisions").tag("kind", "budget").tag("policy", "daily")
					.tag("outcome", "allowed").counter().count()).isEqualTo(2);
				assertThat(registry.get("rate.limit.decisions").tag("kind", "concurrency")
					.tag("policy", "MeteredService.spend.concurrency").tag("outcome", "allowed").counter().count())
					.isEqualTo(2);
				assertThat(registry.get("rate.limit.store.latency").tag("kind", "budget").timer().count()).isEqualTo(3);
				assertThat(registry.get("rate.limit.concurrency.permits.in.use")
					.tag("policy", "MeteredService.spend.concurrency")
					.gauge()
					.value()).isZero();
			});
	}

	@Test
	void decisionsOnOverflowSlotsAreMeasuredPerStoreAndPolicy() {
		this.contextRunner.withBean(SimpleMeterRegistry.class)
			.withPropertyValues("rate-limit.memory.max-keys=1", "rate-limit.memory.max-budget-keys=1",
					"rate-limit.memory.overflow-slots=8", "rate-limit.policies.per-ip.capacity=5",
					"rate-limit.policies.per-ip.refill=5/1h", "rate-limit.budgets.daily.amount=1.00",
					"rate-limit.concurrency.cap.permits=2")
			.run((context) -> {
				Limits limits = context.getBean(Limits.class);
				List<Permit> held = new ArrayList<>();
				for (String key : List.of("a", "b", "c")) {
					limits.tryAcquire("per-ip", key, 1);
					limits.reserve("daily", key, "0.10").settle(100_000);
					held.add(limits.permit("cap", key));
				}
				MeterRegistry registry = context.getBean(MeterRegistry.class);
				for (String[] storeAndPolicy : new String[][] { { "rate-limit", "per-ip" }, { "budget", "daily" },
						{ "concurrency", "cap" } }) {
					assertThat(registry.get("rate.limit.memory.overflow.decisions")
						.tag("store", storeAndPolicy[0])
						.tag("policy", storeAndPolicy[1])
						.functionCounter()
						.count()).as("overflow decisions of %s", (Object) storeAndPolicy).isEqualTo(2);
				}
				assertThat(registry.find("rate.limit.memory.refusals").meter()).isNull();
				assertThat(context.getBean(InMemoryKeyBounds.class).budgets().overflowSlots()).isEqualTo(8);
				held.forEach(Permit::release);
			});
	}

	@Test
	void runWithoutMicrometerShouldCountNothingAndStillLimit() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(MeterRegistry.class))
			.run((context) -> assertThat(context).hasSingleBean(RateLimiter.class)
				.doesNotHaveBean(MicrometerLimitListener.class));
	}

	@Test
	void runWithBudgetsShouldBindSingleAndMultipleWindows() {
		this.contextRunner
			.withPropertyValues("rate-limit.budgets.daily.unit=USD", "rate-limit.budgets.daily.amount=5.00",
					"rate-limit.budgets.daily.zone=Europe/Berlin", "rate-limit.budgets.both.limits[0].window=day",
					"rate-limit.budgets.both.limits[0].amount=5", "rate-limit.budgets.both.limits[1].window=month",
					"rate-limit.budgets.both.limits[1].amount=2,000,000")
			.run((context) -> {
				NamedLimits<BudgetPolicy> budgets = context.getBean(LimitRegistry.class).budgets();
				assertThat(budgets.find("daily")).hasValueSatisfying((budget) -> {
					assertThat(budget.limits()).singleElement()
						.satisfies((limit) -> assertThat(limit.amountMicros()).isEqualTo(5_000_000));
					assertThat(budget.failureMode()).isEqualTo(FailureMode.CLOSED);
				});
				assertThat(budgets.find("both")).hasValueSatisfying((budget) -> assertThat(budget.limits())
					.extracting(dev.ratelimit.budget.BudgetLimit::amountMicros)
					.containsExactly(5_000_000L, 2_000_000_000_000L));
				assertThat(context).hasSingleBean(CostBudgets.class);
			});
	}

	@Test
	void runWithAnAmountFinerThanAMicroUnitShouldNameTheProperty() {
		this.contextRunner.withPropertyValues("rate-limit.budgets.b.amount=0.0000001")
			.run((context) -> assertThat(analyze(context).getDescription()).contains("rate-limit.budgets.b.amount")
				.contains("six decimal places"));
	}

	@Test
	void runWithUnknownZoneOrWindowShouldNameTheProperty() {
		this.contextRunner.withPropertyValues("rate-limit.budgets.b.amount=1", "rate-limit.budgets.b.zone=Mars/Base")
			.run((context) -> assertThat(analyze(context).getDescription()).contains("rate-limit.budgets.b.zone"));
		this.contextRunner
			.withPropertyValues("rate-limit.budgets.b.limits[0].amount=1", "rate-limit.budgets.b.limits[0].window=fortnight")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("rate-limit.budgets.b.limits[0].window"));
	}

	@Test
	void runWithAnnotationNamingAnUnknownBudgetShouldNameTheMethod() {
		this.contextRunner.withUserConfiguration(UnknownBudgetConfiguration.class)
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains(UnknownBudgetService.class.getName() + ".spend()")
				.contains("no budget named 'nope'"));
	}

	@Test
	void runWithNonPositiveCapacityShouldNameTheProperty() {
		this.contextRunner.withPropertyValues("rate-limit.policies.api.capacity=0", "rate-limit.policies.api.refill=1/1s")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("rate-limit.policies.api.capacity")
				.contains("'0'"));
	}

	@Test
	void runWithNonPositiveRefillShouldNameTheProperty() {
		this.contextRunner.withPropertyValues("rate-limit.policies.api.capacity=5", "rate-limit.policies.api.refill=0/1s")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("rate-limit.policies.api.refill")
				.contains("\"0/1s\""));
	}

	@Test
	void runWithUnparsablePolicyKeyShouldNameTheProperty() {
		this.contextRunner
			.withPropertyValues("rate-limit.policies.api.capacity=5", "rate-limit.policies.api.refill=1/1s",
					"rate-limit.policies.api.key=header('X-Api-Key'")
			.run((context) -> assertThat(analyze(context).getDescription()).contains("rate-limit.policies.api.key"));
	}

	@Test
	void runWithAnnotationNamingAnUnknownPolicyShouldNameTheMethod() {
		this.contextRunner.withUserConfiguration(UnknownPolicyConfiguration.class)
			.withPropertyValues("rate-limit.policies.agent-runs.capacity=5", "rate-limit.policies.agent-runs.refill=1/1s")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription()).contains(UnknownPolicyService.class.getName() + ".run()")
					.contains("'agnt-runs'")
					.contains("[agent-runs]");
				assertThat(analysis.getAction()).contains("rate-limit.policies.agnt-runs");
			});
	}

	@Test
	void runWithUnparsableAnnotationKeyShouldNameTheMethodAndExpression() {
		this.contextRunner.withUserConfiguration(BadExpressionConfiguration.class)
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains(BadExpressionService.class.getName() + ".run()")
				.contains("#user.."));
	}

	@Test
	void runWithInvalidInlineCapacityShouldNameTheMethodAndAttribute() {
		this.contextRunner.withUserConfiguration(BadInlineConfiguration.class)
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains(BadInlineService.class.getName() + ".run()")
				.contains("capacity '-3'"));
	}

	@Test
	void annotatedServiceMethodIsLimitedOutsideWebRequests() {
		this.contextRunner.withUserConfiguration(InlineConfiguration.class)
			.withPropertyValues("inline.capacity=2")
			.run((context) -> {
				InlineService service = context.getBean(InlineService.class);
				assertThat(service.work("a")).isEqualTo("done a");
				assertThat(service.work("a")).isEqualTo("done a");
				assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> service.work("a"))
					.satisfies((ex) -> assertThat(ex.getViolatedPolicies()).containsExactly("inline-work"));
				assertThat(service.work("b")).isEqualTo("done b");
				assertThat(service.calls()).isEqualTo(3);
			});
	}

	@ParameterizedTest
	@ValueSource(strings = { "spring.aop.proxy-target-class=true", "spring.aop.proxy-target-class=false",
			"spring.aop.auto=false" })
	void annotationsApplyWithoutAspectJWhateverSpringAopIsSetTo(String aop) {
		// The starter does not bring AspectJ; Spring Boot registers no auto-proxy creator for the last two.
		this.contextRunner.withClassLoader(new FilteredClassLoader("org.aspectj"))
			.withBean(PublicService.class)
			.withPropertyValues(aop)
			.run((context) -> {
				assertThat(context).hasSingleBean(InfrastructureAdvisorAutoProxyCreator.class);
				PublicService service = context.getBean(PublicService.class);
				assertThat(AopUtils.isAopProxy(service)).isTrue();
				service.work();
				assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(service::work);
			});
	}

	@Test
	void runWithAspectJShouldLeaveItsAutoProxyCreatorInCharge() {
		this.contextRunner.withUserConfiguration(InlineConfiguration.class)
			.withPropertyValues("inline.capacity=1")
			.run((context) -> {
				assertThat(context).hasSingleBean(AbstractAdvisorAutoProxyCreator.class);
				assertThat(context).getBean(AbstractAdvisorAutoProxyCreator.class)
					.isInstanceOf(AnnotationAwareAspectJAutoProxyCreator.class);
				InlineService service = context.getBean(InlineService.class);
				service.work("a");
				assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> service.work("a"));
			});
	}

	@Test
	void otherAdvisorsDoNotLookAtTheStartersSpringFacingBeans() {
		this.contextRunner.withUserConfiguration(InlineConfiguration.class, RecordingAdvisorConfiguration.class)
			.withPropertyValues("inline.capacity=1")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				List<Class<?>> asked = RecordingAdvisorConfiguration.asked;
				// The application's own beans are still looked at; the starter's infrastructure is not.
				assertThat(asked).contains(InlineService.class)
					.doesNotContain(LimitAnnotations.class, AnnotatedBeans.class, RateLimitedMethodsValidator.class,
							KeyExpressions.class, InMemoryKeyBounds.class);
			});
	}

	@Test
	void runInServletApplicationShouldRegisterTheFilterAndExceptionResolver() {
		new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class))
			.withPropertyValues("rate-limit.filter.order=5", "rate-limit.policies.per-ip.capacity=10",
					"rate-limit.policies.per-ip.refill=10/1s", "rate-limit.routes[0].pattern=/api/**",
					"rate-limit.routes[0].policies=per-ip")
			.run((context) -> {
				assertThat(context).hasSingleBean(RateLimitExceptionResolver.class);
				assertThat(context).getBean("rateLimitFilterRegistration", FilterRegistrationBean.class)
					.satisfies((registration) -> assertThat(registration.getOrder()).isEqualTo(5));
			});
	}

	@Test
	void runWithRouteNamingAnUnknownPolicyShouldNameTheProperty() {
		new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class))
			.withPropertyValues("rate-limit.routes[0].pattern=/api/**", "rate-limit.routes[0].policies=nope")
			.run((context) -> assertThat(analyze(context).getDescription()).contains("rate-limit.routes[0].policies")
				.contains("'nope'"));
	}

	@Test
	void runWithANameUsedByTwoKindsShouldFailNamingBoth() {
		this.contextRunner
			.withPropertyValues("rate-limit.policies.provider.capacity=10", "rate-limit.policies.provider.refill=10/1s",
					"rate-limit.concurrency.provider.permits=4")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("rate-limit.policies.provider", "rate-limit.concurrency.provider"));
	}

	@Test
	void runWithManyPoliciesShouldKeepTheirConfigurationOrder() {
		String[] names = { "zeta", "alpha", "mu", "beta", "omega", "kappa", "delta", "pi", "epsilon", "gamma" };
		String[] properties = new String[names.length * 2];
		for (int i = 0; i < names.length; i++) {
			properties[2 * i] = "rate-limit.policies." + names[i] + ".capacity=1";
			properties[2 * i + 1] = "rate-limit.policies." + names[i] + ".refill=1/1s";
		}
		this.contextRunner.withPropertyValues(properties)
			.run((context) -> assertThat(context.getBean(LimitRegistry.class).rateLimits().names())
				.containsExactly(names));
	}

	private static FailureAnalysis analyze(ApplicationContextAssertProvider<?> context) {
		return StartupFailures.analyze(context);
	}

	@Configuration(proxyBeanMethods = false)
	static class UserBackendConfiguration {

		final RateLimitBackend backend = (acquisitions) -> List.of(new Decision(true, 0, 0, 0, 0));

		@Bean
		RateLimitBackend userBackend() {
			return this.backend;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UnknownPolicyConfiguration {

		@Bean
		UnknownPolicyService unknownPolicyService() {
			return new UnknownPolicyService();
		}

	}

	static class UnknownPolicyService {

		@RateLimited("agnt-runs")
		public void run() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BadExpressionConfiguration {

		@Bean
		BadExpressionService badExpressionService() {
			return new BadExpressionService();
		}

	}

	static class BadExpressionService {

		@RateLimited(capacity = "5", refill = "1/1s", key = "#user..")
		public void run() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BadInlineConfiguration {

		@Bean
		BadInlineService badInlineService() {
			return new BadInlineService();
		}

	}

	static class BadInlineService {

		@RateLimited(capacity = "-3", refill = "1/1s")
		public void run() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class MeteredConfiguration {

		@Bean
		MeteredService meteredService() {
			return new MeteredService();
		}

	}

	static class MeteredService {

		@CostBudget(value = "daily", estimate = "0.40")
		@Concurrency(permits = "2")
		public double spend(MeterRegistry registry) {
			// Inside the call the permit is held.
			return registry.find("rate.limit.concurrency.permits.in.use").gauge().value();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UnknownBudgetConfiguration {

		@Bean
		UnknownBudgetService unknownBudgetService() {
			return new UnknownBudgetService();
		}

	}

	static class UnknownBudgetService {

		@CostBudget(value = "nope", estimate = "1")
		public void spend() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class InlineWindowConfiguration {

		@Bean
		InlineWindowService inlineWindowService() {
			return new InlineWindowService();
		}

	}

	static class InlineWindowService {

		@RateLimited(algorithm = "sliding-window-log", capacity = "2", window = "1h")
		public void work() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class InlineConfiguration {

		@Bean
		InlineService inlineService() {
			return new InlineService();
		}

	}

	static class InlineService {

		private int calls;

		public int calls() {
			return this.calls;
		}

		@RateLimited(policy = "inline-work", capacity = "${inline.capacity}", refill = "1/1h", key = "#user")
		public String work(String user) {
			this.calls++;
			return "done " + user;
		}

	}

	/** Public, for a class proxy defined by a {@link FilteredClassLoader}. */
	public static class PublicService {

		@RateLimited(policy = "public-work", capacity = "1", refill = "1/1h")
		public void work() {
		}

	}

	/** An advisor of the application's, recording every class the auto-proxy creator asks it about. */
	@Configuration(proxyBeanMethods = false)
	static class RecordingAdvisorConfiguration {

		static final List<Class<?>> asked = new java.util.concurrent.CopyOnWriteArrayList<>();

		@Bean
		static Advisor recordingAdvisor() {
			asked.clear();
			return new DefaultPointcutAdvisor(new StaticMethodMatcherPointcut() {

				@Override
				public boolean matches(Method method, Class<?> targetClass) {
					asked.add(targetClass);
					return false;
				}

			}, (MethodInterceptor) MethodInvocation::proceed);
		}

	}

}
