package dev.ratelimit.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;
import dev.ratelimit.support.RedisServerFixture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The start-up report: one line per policy saying where it applies, and
 * warnings for what would silently not work, among them, with Redis, the
 * limits an outage would leave unlimited.
 */
@ExtendWith(OutputCaptureExtension.class)
class StartupReportTests {

	private static final RedisServerFixture redis = RedisServerFixture.shared();

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
			// Unset failure modes read as their defaults: local for rate limits, closed for budgets.
			assertThat(output).contains("Rate limit policy 'api' (token-bucket 10, refill 10/1s, key ip, "
					+ "failure-mode local) applies to route /api/** [GET], method " + Limited.class.getName() + "#work");
			assertThat(output).contains("Budget 'daily' (5.000000 USD per day, key global, failure-mode closed) "
					+ "applies to method " + Limited.class.getName() + "#spend");
			assertThat(output).contains("Concurrency cap 'Limited.capped.concurrency' (2 permits, local, key global) applies to "
					+ "method " + Limited.class.getName() + "#capped");
			// An inline policy cannot choose its failure mode: it takes the default.
			assertThat(output).contains("Rate limit policy 'Limited.inline' (token-bucket 3, refill 1/1s, key global, "
					+ "failure-mode local) applies to method " + Limited.class.getName() + "#inline");
		});
	}

	@Test
	void policyThatAppliesNowhereIsWarnedAbout(CapturedOutput output) {
		this.contextRunner.run((context) -> assertThat(output)
			.contains("Rate limit policy 'unused' (token-bucket 1, refill 1/1s, key global, failure-mode local) "
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
					+ "failure-mode local, prefetch 5) applies to route /api/** [GET]");
			assertThat(output).contains("rate-limit.policies.api.prefetch has no effect with the memory backend");
		});
	}

	@Test
	void remoteBackendNamesTheLimitsAnOutageLeavesUnlimitedInOneWarning(CapturedOutput output) {
		onRedis().withPropertyValues("rate-limit.policies.unused.failure-mode=open",
				"rate-limit.policies.dark.capacity=1", "rate-limit.policies.dark.refill=1/1s",
				"rate-limit.policies.dark.shadow=true", "rate-limit.policies.dark.failure-mode=open",
				"rate-limit.concurrency.provider.permits=4", "rate-limit.concurrency.provider.scope=distributed",
				"rate-limit.concurrency.provider.failure-mode=open", "rate-limit.concurrency.in-process.permits=4",
				"rate-limit.concurrency.in-process.failure-mode=open", "rate-limit.budgets.daily.failure-mode=open")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("Concurrency cap 'provider' (4 permits, distributed, key global, "
						+ "failure-mode open)");
				// A shadow policy never limits, and a local cap never asks Redis: neither is named.
				assertThat(output).containsOnlyOnce("Unlimited during a Redis outage")
					.contains("Unlimited during a Redis outage (failure-mode open): rate limit policy 'unused', "
							+ "budget 'daily', concurrency cap 'provider'. While Redis does not answer");
			});
	}

	@Test
	void remoteBackendSaysNothingAboutOutagesWhenEveryLimitKeepsLimiting(CapturedOutput output) {
		// The defaults (local for rate limits and caps, closed for budgets) leave nothing unlimited.
		onRedis().withPropertyValues("rate-limit.concurrency.provider.permits=4",
				"rate-limit.concurrency.provider.scope=distributed")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("Rate limiter backend: redis")
					.contains("Concurrency cap 'provider' (4 permits, distributed, key global, failure-mode local)")
					.doesNotContain("Unlimited during");
			});
	}

	@Test
	void memoryBackendSaysNothingAboutOutages(CapturedOutput output) {
		// No store outside the process, so no outage: even an explicit open changes nothing to report.
		this.contextRunner.withPropertyValues("rate-limit.policies.api.failure-mode=open").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(output).contains("failure-mode open)").doesNotContain("Unlimited during").doesNotContain("outage");
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

	@Test
	void aRouteCapOnEveryPathSaysItLeavesTheManagementEndpointsOut(CapturedOutput output) {
		new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class))
			.withPropertyValues("rate-limit.concurrency.overload.adaptive.algorithm=gradient2",
					"rate-limit.routes[0].pattern=/**", "rate-limit.routes[0].concurrency=overload")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(output).contains("Adaptive concurrency cap 'overload' (gradient2, limit from 20 between 1 "
						+ "and 200, local, no priority: every call alike) applies to route /** (not the management "
						+ "endpoints under /actuator/**: rate-limit.filter.cap-management-endpoints)");
			});
	}

	private ApplicationContextRunner onRedis() {
		return this.contextRunner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withPropertyValues("rate-limit.backend=redis", "spring.data.redis.host=127.0.0.1",
					"spring.data.redis.port=" + redis.port());
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

		@RateLimited(capacity = "3", refill = "1/1s")
		public void inline() {
		}

		@RateLimited(capacity = "1", refill = "1/1s")
		private void hidden() {
		}

		@RateLimited(capacity = "1", refill = "1/1s")
		public final void sealed() {
		}

	}

}
