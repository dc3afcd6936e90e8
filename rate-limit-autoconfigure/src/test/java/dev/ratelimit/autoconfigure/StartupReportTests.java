package dev.ratelimit.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The start-up report: one line per policy saying where it applies, and
 * warnings for what would silently not work.
 */
@ExtendWith(OutputCaptureExtension.class)
class StartupReportTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class))
		.withUserConfiguration(Services.class)
		.withPropertyValues("rate-limit.policies.api.capacity=10", "rate-limit.policies.api.refill=10/1s",
				"rate-limit.policies.api.key=ip", "rate-limit.policies.unused.capacity=1",
				"rate-limit.policies.unused.refill=1/1s", "rate-limit.routes[0].pattern=/api/**",
				"rate-limit.routes[0].methods=GET", "rate-limit.routes[0].policies=api",
				"rate-limit.budgets.daily.amount=5.00", "rate-limit.budgets.daily.unit=USD");

	@Test
	void eachPolicyIsLoggedWithWhereItApplies(CapturedOutput output) {
		this.contextRunner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(output).contains("Rate limiter backend: memory (rate-limit.backend): limits are kept in this "
					+ "process");
			assertThat(output).contains("Rate limit policy 'api' (token-bucket 10, refill 10/1s, key ip, "
					+ "failure-mode open) applies to route /api/** [GET], method " + Limited.class.getName() + "#work");
			assertThat(output).contains("Budget 'daily' (5.000000 USD per day, key global) applies to method "
					+ Limited.class.getName() + "#spend");
			assertThat(output).contains("Concurrency cap 'Limited.capped.concurrency' (2 permits, local, key global) applies to "
					+ "method " + Limited.class.getName() + "#capped");
		});
	}

	@Test
	void policyThatAppliesNowhereIsWarnedAbout(CapturedOutput output) {
		this.contextRunner.run((context) -> assertThat(output)
			.contains("Rate limit policy 'unused' (token-bucket 1, refill 1/1s, key global, failure-mode open) "
					+ "is configured but applies nowhere"));
	}

	@Test
	void refillIsReportedInTheUnitItWasConfiguredIn(CapturedOutput output) {
		this.contextRunner.withPropertyValues("rate-limit.policies.unused.refill=1/10s")
			.run((context) -> assertThat(output).contains("Rate limit policy 'unused' (token-bucket 1, refill 1/10s,"));
	}

	@Test
	void prefetchWithTheMemoryBackendIsReportedWithItsPolicy(CapturedOutput output) {
		this.contextRunner.withPropertyValues("rate-limit.policies.api.prefetch=5").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(output).contains("Rate limit policy 'api' (token-bucket 10, refill 10/1s, key ip, "
					+ "failure-mode open, prefetch 5) applies to route /api/** [GET]");
			assertThat(output).contains("rate-limit.policies.api.prefetch has no effect with the memory backend");
		});
	}

	@Test
	void annotatedMethodsAProxyCannotInterceptAreWarnedAbout(CapturedOutput output) {
		this.contextRunner.run((context) -> {
			assertThat(output).contains("Method " + Limited.class.getName()
					+ "#hidden is annotated for rate limiting but is private: Spring proxies cannot intercept it");
			assertThat(output).contains("Method " + Limited.class.getName()
					+ "#sealed is annotated for rate limiting but is final");
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class Services {

		@Bean
		Limited limited() {
			return new Limited();
		}

	}

	static class Limited {

		@RateLimited("api")
		public void work() {
			hidden();
		}

		@CostBudget(value = "daily", estimate = "0.01")
		public void spend() {
		}

		@Concurrency(permits = "2")
		public void capped() {
		}

		@RateLimited(capacity = "1", refill = "1/1s")
		private void hidden() {
		}

		@RateLimited(capacity = "1", refill = "1/1s")
		public final void sealed() {
		}

	}

}
