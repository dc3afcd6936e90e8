package dev.ratelimit.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.ZoneId;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.io.ByteArrayResource;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.budget.Amount;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.BudgetWindow;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.RateLimitConfigurationException;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Refill;
import dev.ratelimit.support.StartupFailures;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Binding and checking {@code rate-limit.*}: typed values fail binding with
 * Boot's own report of the property and value; everything else is checked in
 * one pass when the properties are bound, whatever the backend, every problem
 * reported at once with its property.
 */
class RateLimitPropertiesTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class));

	@Test
	void typedValuesAreBound() {
		this.contextRunner
			.withPropertyValues("rate-limit.policies.api.capacity=10", "rate-limit.policies.api.refill=1/10s",
					"rate-limit.budgets.spend.zone=Europe/Berlin", "rate-limit.budgets.spend.amount=2,500.25",
					"rate-limit.budgets.spend.window=24h", "rate-limit.budgets.both.limits[0].window=week",
					"rate-limit.budgets.both.limits[0].amount=0.000001")
			.run((context) -> {
				RateLimitProperties properties = context.getBean(RateLimitProperties.class);
				assertThat(properties.getPolicies().get("api").getRefill()).isEqualTo(Refill.of(1, Duration.ofSeconds(10)));
				RateLimitProperties.Budget spend = properties.getBudgets().get("spend");
				assertThat(spend.getZone()).isEqualTo(ZoneId.of("Europe/Berlin"));
				assertThat(spend.getAmount()).isEqualTo(new Amount(2_500_250_000L));
				assertThat(spend.getWindow()).isEqualTo(BudgetWindow.rolling(Duration.ofHours(24)));
				assertThat(properties.getBudgets().get("both").getLimits().get(0).getWindow().kind())
					.isEqualTo(BudgetWindow.Kind.WEEK);
				assertThat(properties.getBudgets().get("both").getLimits().get(0).getAmount().micros()).isOne();
			});
	}

	@Test
	void malformedRefillFailsBindingNamingThePropertyAndValue() {
		this.contextRunner
			.withPropertyValues("rate-limit.policies.api.capacity=10", "rate-limit.policies.api.refill=ten per second")
			.run((context) -> assertBindingFailure(context, "rate-limit.policies.api.refill", "ten per second",
					"is not a refill rate: expected tokens/period such as 10/1s"));
	}

	@Test
	void malformedBudgetWindowFailsBindingNamingThePropertyAndValue() {
		this.contextRunner
			.withPropertyValues("rate-limit.budgets.b.limits[0].window=fortnight",
					"rate-limit.budgets.b.limits[0].amount=1")
			.run((context) -> assertBindingFailure(context, "rate-limit.budgets.b.limits[0].window", "fortnight",
					"'fortnight' is not a budget window: use day, week, month, or a rolling duration such as 24h"));
	}

	@Test
	void unknownTimeZoneFailsBindingNamingThePropertyAndValue() {
		this.contextRunner.withPropertyValues("rate-limit.budgets.b.amount=1", "rate-limit.budgets.b.zone=Mars/Base")
			.run((context) -> assertBindingFailure(context, "rate-limit.budgets.b.zone", "Mars/Base", "Mars/Base"));
	}

	@Test
	void malformedAmountsFailBindingNamingThePropertyAndValue() {
		this.contextRunner.withPropertyValues("rate-limit.budgets.b.amount=0.0000001")
			.run((context) -> assertBindingFailure(context, "rate-limit.budgets.b.amount", "0.0000001",
					"more than six decimal places"));
		this.contextRunner.withPropertyValues("rate-limit.budgets.b.amount=-5")
			.run((context) -> assertBindingFailure(context, "rate-limit.budgets.b.amount", "-5", "is negative"));
		this.contextRunner.withPropertyValues("rate-limit.budgets.b.limits[0].window=day",
				"rate-limit.budgets.b.limits[0].amount=five")
			.run((context) -> assertBindingFailure(context, "rate-limit.budgets.b.limits[0].amount", "five",
					"'five' is not a decimal amount"));
	}

	@Test
	void amountsThatYamlReadsAsNumbersAreBoundExactly() {
		// Unquoted, YAML reads 0.10 as a Double and 2000000 as an Integer.
		this.contextRunner.withInitializer(yaml("""
				rate-limit:
				  budgets:
				    cents:
				      amount: 0.10
				    tokens:
				      limits:
				        - { window: day, amount: 2000000 }
				        - { window: month, amount: 0.000002 }
				        - { window: week, amount: 1125899906.84262 }
				""")).run((context) -> {
			RateLimitProperties properties = context.getBean(RateLimitProperties.class);
			assertThat(properties.getBudgets().get("cents").getAmount().micros()).isEqualTo(100_000);
			assertThat(properties.getBudgets().get("tokens").getLimits())
				.extracting((limit) -> limit.getAmount().micros())
				.containsExactly(2_000_000_000_000L, 2L, 1_125_899_906_842_620L);
		});
		this.contextRunner.withInitializer(yaml("""
				rate-limit:
				  budgets:
				    b:
				      amount: 0.0000001
				""")).run((context) -> assertBindingFailure(context, "rate-limit.budgets.b.amount", "1.0E-7",
				"more than six decimal places"));
	}

	@Test
	void renamedLimitPropertiesAreBound() {
		this.contextRunner
			.withPropertyValues("rate-limit.policies.hot.capacity=1000", "rate-limit.policies.hot.refill=1000/1s",
					"rate-limit.policies.hot.prefetch=50", "rate-limit.budgets.spend.amount=5",
					"rate-limit.budgets.spend.reservation-timeout=90s", "rate-limit.concurrency.cap.permits=2",
					"rate-limit.concurrency.cap.permit-ttl=12s", "rate-limit.redis.prefetch.max-keys=77")
			.run((context) -> {
				LimitRegistry limits = context.getBean(LimitRegistry.class);
				RateLimitPolicy hot = limits.rateLimits().find("hot").orElseThrow();
				BudgetPolicy spend = limits.budgets().find("spend").orElseThrow();
				ConcurrencyPolicy cap = limits.concurrency().find("cap").orElseThrow();
				assertThat(hot.prefetch()).isEqualTo(50);
				assertThat(spend.reservationTimeoutMicros()).isEqualTo(90_000_000L);
				assertThat(cap.permitTtlMicros()).isEqualTo(12_000_000L);
				assertThat(context.getBean(RateLimitProperties.class).getRedis().getPrefetch().getMaxKeys())
					.isEqualTo(77);
			});
	}

	@Test
	void renamedLimitPropertiesAreCheckedUnderTheirNewNames() {
		this.contextRunner
			.withPropertyValues("rate-limit.budgets.spend.amount=5", "rate-limit.budgets.spend.reservation-timeout=0s",
					"rate-limit.concurrency.cap.permits=2", "rate-limit.concurrency.cap.permit-ttl=5ms")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("Property rate-limit.budgets.spend.reservation-timeout with value '0s' is invalid: "
						+ "must be positive")
				.contains("Property rate-limit.concurrency.cap.permit-ttl with value '5ms' is invalid: "
						+ "must be at least 10ms"));
	}

	@Test
	void memoryKeyBoundsAreCheckedWithEveryBackend() {
		this.contextRunner.withPropertyValues("rate-limit.memory.max-keys=0")
			.run((context) -> assertThat(analyze(context).getDescription())
				.isEqualTo("Property rate-limit.memory.max-keys with value '0' is invalid: must be positive"));
		this.contextRunner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withPropertyValues("rate-limit.backend=redis", "rate-limit.redis.connect-timeout=50ms",
					"rate-limit.memory.max-budget-keys=-1")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription()).isEqualTo(
						"Property rate-limit.memory.max-budget-keys with value '-1' is invalid: must be positive");
				assertThat(analysis.getAction()).isEqualTo("Update rate-limit.memory.max-budget-keys in your configuration.");
			});
		this.contextRunner.withPropertyValues("rate-limit.memory.overflow-slots=0")
			.run((context) -> assertThat(analyze(context).getDescription()).isEqualTo(
					"Property rate-limit.memory.overflow-slots with value '0' is invalid: must be between 1 and 1048576"));
		this.contextRunner.withPropertyValues("rate-limit.memory.overflow-slots=1048577")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("rate-limit.memory.overflow-slots with value '1048577'"));
	}

	@Test
	void nearLimitShareIsAPercentFromOneToNinetyNine() {
		this.contextRunner.withPropertyValues("rate-limit.metrics.near-limit=0")
			.run((context) -> assertThat(analyze(context).getDescription()).isEqualTo(
					"Property rate-limit.metrics.near-limit with value '0' is invalid: must be between 1 and 99: "
							+ "the percent of a key's allowance used beyond which an allowed decision counts as "
							+ "near the limit, such as 80"));
		this.contextRunner.withPropertyValues("rate-limit.metrics.near-limit=100")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("rate-limit.metrics.near-limit with value '100'"));
		this.contextRunner.withPropertyValues("rate-limit.metrics.near-limit=99")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void redisSettingsAreCheckedWhateverTheBackend() {
		this.contextRunner.withPropertyValues("rate-limit.redis.deny-cache.max-keys=0")
			.run((context) -> assertThat(analyze(context).getDescription()).isEqualTo(
					"Property rate-limit.redis.deny-cache.max-keys with value '0' is invalid: must be positive"));
		this.contextRunner.withPropertyValues("rate-limit.redis.prefetch.max-keys=-3")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("rate-limit.redis.prefetch.max-keys with value '-3'"));
		this.contextRunner.withPropertyValues("rate-limit.redis.timeout=0ms")
			.run((context) -> assertThat(analyze(context).getDescription())
				.isEqualTo("Property rate-limit.redis.timeout with value '0s' is invalid: must be positive"));
		this.contextRunner.withPropertyValues("rate-limit.redis.connect-timeout=-1s")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("rate-limit.redis.connect-timeout with value '-1s'"));
	}

	@Test
	void busyTimeoutIsPositiveAndAtLeastTheTimeout() {
		this.contextRunner.withPropertyValues("rate-limit.redis.busy-timeout=0ms")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("rate-limit.redis.busy-timeout with value '0s' is invalid: must be positive"));
		this.contextRunner.withPropertyValues("rate-limit.redis.busy-timeout=200ms")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("rate-limit.redis.busy-timeout with value '200ms' is invalid: must be at least "
						+ "rate-limit.redis.timeout (PT0.25S)"));
	}

	@Test
	void keySettingsAreNamedOneByOne() {
		this.contextRunner.withPropertyValues("rate-limit.key-prefix=r l")
			.run((context) -> assertThat(analyze(context).getDescription())
				.isEqualTo("Property rate-limit.key-prefix with value 'r l' is invalid: use a non-empty prefix "
						+ "without braces, spaces or control characters, such as rl"));
		this.contextRunner.withPropertyValues("rate-limit.max-key-length=8")
			.run((context) -> assertThat(analyze(context).getDescription())
				.isEqualTo("Property rate-limit.max-key-length with value '8' is invalid: must be at least 16"));
	}

	@Test
	void negativeUnavailableRetryAfterIsNamed() {
		this.contextRunner.withPropertyValues("rate-limit.unavailable-retry-after=-1s")
			.run((context) -> assertThat(analyze(context).getDescription())
				.contains("rate-limit.unavailable-retry-after with value '-1s' is invalid: must not be negative"));
	}

	@Test
	void routeRulesAreCheckedWithoutAServletApplication() {
		this.contextRunner
			.withPropertyValues("rate-limit.policies.api.capacity=5", "rate-limit.policies.api.refill=5/1s",
					"rate-limit.routes[0].pattern=/api/**", "rate-limit.routes[0].policies=api",
					"rate-limit.routes[1].pattern=/admin/**", "rate-limit.routes[1].methods=FETCH",
					"rate-limit.routes[1].policies=api")
			.run((context) -> assertThat(analyze(context).getDescription()).startsWith(
					"Property rate-limit.routes[1].methods with value 'FETCH' is invalid: not an HTTP method; use one of "));
	}

	@Test
	void everyInvalidPropertyIsReportedAtOnce() {
		this.contextRunner
			.withPropertyValues("rate-limit.policies.api.capacity=0", "rate-limit.policies.api.refill=5/1s",
					"rate-limit.policies.ok.capacity=5", "rate-limit.policies.ok.refill=5/1s",
					"rate-limit.policies.ok.key=header('X'", "rate-limit.budgets.b.window=day",
					"rate-limit.concurrency.c.permits=0", "rate-limit.memory.max-keys=0",
					"rate-limit.routes[0].pattern=/x", "rate-limit.routes[0].policies=nope")
			.run((context) -> {
				FailureAnalysis analysis = analyze(context);
				assertThat(analysis.getDescription()).startsWith("6 rate-limit properties are invalid:")
					.contains("  - Property rate-limit.policies.api.capacity with value '0'")
					.contains("  - Property rate-limit.policies.ok.key with value 'header('X''")
					.contains("  - Property rate-limit.budgets.b.amount with value 'null' is invalid: must be set "
							+ "with window")
					.contains("  - Property rate-limit.concurrency.c.permits with value '0'")
					.contains("  - Property rate-limit.routes[0].policies with value 'nope'")
					.contains("  - Property rate-limit.memory.max-keys with value '0'");
				assertThat(analysis.getAction()).contains("Update rate-limit.policies.api.capacity in your configuration.")
					.contains("Update rate-limit.memory.max-keys in your configuration.");
			});
	}

	@Test
	void checkRunsWhenThePropertiesAreBoundBeforeAnyBeanUsesThem() {
		this.contextRunner.withPropertyValues("rate-limit.memory.max-keys=0").run((context) -> {
			Throwable failure = context.getStartupFailure();
			assertThat(failure).rootCause().isInstanceOf(RateLimitConfigurationException.class);
			// The properties bean itself fails, not the first bean that happens to read them.
			assertThat(failure).hasMessageContaining("rate-limit-" + RateLimitProperties.class.getName());
		});
	}

	private static ApplicationContextInitializer<ConfigurableApplicationContext> yaml(String yaml) {
		return (context) -> {
			try {
				new YamlPropertySourceLoader().load("application.yml", new ByteArrayResource(yaml.getBytes()))
					.forEach(context.getEnvironment().getPropertySources()::addFirst);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		};
	}

	private static void assertBindingFailure(AssertableApplicationContext context,
			String property, String value, String reason) {
		FailureAnalysis analysis = analyze(context);
		assertThat(analysis.getDescription()).contains("Property: " + property)
			.contains("Value: \"" + value + "\"")
			.contains(reason);
		assertThat(analysis.getAction()).contains("Update your application's configuration");
	}

	private static FailureAnalysis analyze(AssertableApplicationContext context) {
		return StartupFailures.analyze(context);
	}

}
