package dev.ratelimit.metrics;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.Limits;
import dev.ratelimit.RateLimited;
import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.core.RateLimitBackendUnavailableException;
import dev.ratelimit.core.RateLimitException;
import dev.ratelimit.support.RedisServerFixture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Every per-limit counter an alert or a dashboard panel reads exists at 0 once
 * the application has started, before any call. Prometheus takes a counter's
 * first scraped value as its start: a counter created at its first event holds
 * that event at its first scrape, so {@code increase(...)} reads 0 and the first
 * burst after every start is never seen. Registered at 0, the first event is an
 * increase of 1. The series are bounded by the configured limits, never by keys.
 */
class CountersAtZeroTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class))
		.withUserConfiguration(InlineLimitConfiguration.class)
		.withPropertyValues("rate-limit.policies.api.capacity=1", "rate-limit.policies.api.refill=1/1h",
				"rate-limit.policies.trial.capacity=1", "rate-limit.policies.trial.refill=1/1h",
				"rate-limit.policies.trial.shadow=true",
				"rate-limit.policies.planned.key=header('X-User-Id')",
				"rate-limit.policies.planned.plan=header('X-Plan')",
				"rate-limit.policies.planned.default-plan=free",
				"rate-limit.policies.planned.plans.free.capacity=1",
				"rate-limit.policies.planned.plans.free.refill=1/1h",
				"rate-limit.budgets.tenant-daily.amount=1.00", "rate-limit.budgets.tenant-daily.window=day",
				"rate-limit.budgets.tenant-daily.unit=USD",
				"rate-limit.concurrency.provider.permits=1",
				"rate-limit.concurrency.jobs.adaptive.algorithm=aimd",
				"rate-limit.concurrency.probe.adaptive.algorithm=aimd", "rate-limit.concurrency.probe.shadow=true");

	@Test
	void everyCounterOfEveryConfiguredLimitIsRegisteredAtZeroBeforeAnyCall() {
		this.contextRunner.run((context) -> {
			SimpleMeterRegistry meters = context.getBean(SimpleMeterRegistry.class);
			assertThat(series(meters, MicrometerLimitListener.DECISIONS)).containsExactlyInAnyOrder(
					"rate-limit api allowed", "rate-limit api denied", "rate-limit trial shadow",
					"rate-limit planned allowed", "rate-limit planned denied",
					"rate-limit inline-runs allowed", "rate-limit inline-runs denied",
					"budget tenant-daily allowed", "budget tenant-daily denied",
					"concurrency provider allowed", "concurrency provider denied",
					"concurrency jobs allowed", "concurrency jobs denied",
					"concurrency probe allowed", "concurrency probe shadow");
			// A shadow policy never refuses, so its callers are never near the limit; caps cannot say what is left.
			assertThat(series(meters, MicrometerLimitListener.NEAR_LIMIT)).containsExactlyInAnyOrder("rate-limit api",
					"rate-limit planned", "rate-limit inline-runs", "budget tenant-daily");
			assertThat(series(meters, MicrometerLimitListener.PLAN_DEFAULTED))
				.containsExactlyInAnyOrder("rate-limit planned none", "rate-limit planned unknown");
			assertThat(series(meters, MicrometerLimitListener.SHED)).containsExactlyInAnyOrder(
					"jobs critical shed", "jobs normal shed", "jobs background shed", "jobs sheddable shed",
					"probe critical shadow", "probe normal shadow", "probe background shadow",
					"probe sheddable shadow");
			assertThat(series(meters, MicrometerLimitListener.BUDGET_SPENT)).containsExactly("tenant-daily");
			assertThat(series(meters, MicrometerLimitListener.GIVE_BACKS)).contains("rate-limit api given",
					"rate-limit api failed");
			assertThat(series(meters, "rate.limit.memory.overflow.decisions")).containsExactlyInAnyOrder(
					"rate-limit api", "rate-limit trial", "rate-limit planned", "rate-limit inline-runs",
					"budget tenant-daily", "concurrency provider");
			// The memory backend cannot fail: no failure mode ever decides, so no fallback series.
			assertThat(meters.find(MicrometerLimitListener.FALLBACKS).meters()).isEmpty();
			assertThat(meters.getMeters()).allSatisfy((meter) -> assertThat(count(meter)).as(meter.getId().toString())
				.isZero());
		});
	}

	@Test
	void theFirstRefusalAfterAStartIsAnIncreaseOfOne() {
		this.contextRunner.run((context) -> {
			SimpleMeterRegistry meters = context.getBean(SimpleMeterRegistry.class);
			Limits limits = context.getBean(Limits.class);
			assertThat(decisions(meters, "budget", "tenant-daily", "denied")).isZero();
			assertThat(decisions(meters, "rate-limit", "api", "denied")).isZero();
			limits.reserve("tenant-daily", "acme", "0.90");
			assertThatExceptionOfType(RateLimitException.class)
				.isThrownBy(() -> limits.reserve("tenant-daily", "acme", "0.50"));
			assertThat(decisions(meters, "budget", "tenant-daily", "denied")).isOne();
			limits.tryAcquire("api", "ann", 1);
			limits.tryAcquire("api", "ann", 1);
			assertThat(decisions(meters, "rate-limit", "api", "allowed")).isOne();
			assertThat(decisions(meters, "rate-limit", "api", "denied")).isOne();
		});
	}

	@Test
	void withRedisTheFailureModeOfEachLimitIsRegisteredAtZeroAndItsFirstFallbackCounts() {
		RedisServerFixture own = RedisServerFixture.start();
		try {
			new ApplicationContextRunner()
				.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
						RateLimitAutoConfiguration.class))
				.withBean(SimpleMeterRegistry.class)
				.withPropertyValues("rate-limit.backend=redis", "spring.data.redis.host=127.0.0.1",
						"spring.data.redis.port=" + own.port(), "rate-limit.redis.timeout=200ms",
						"rate-limit.policies.api.capacity=5", "rate-limit.policies.api.refill=1/1h",
						"rate-limit.policies.api.failure-mode=local",
						"rate-limit.policies.telemetry.capacity=5", "rate-limit.policies.telemetry.refill=1/1h",
						"rate-limit.policies.telemetry.failure-mode=open",
						"rate-limit.budgets.tenant-daily.amount=1.00", "rate-limit.budgets.tenant-daily.window=day",
						"rate-limit.concurrency.provider.permits=1")
				.run((context) -> {
					SimpleMeterRegistry meters = context.getBean(SimpleMeterRegistry.class);
					assertThat(series(meters, MicrometerLimitListener.FALLBACKS)).containsExactlyInAnyOrder(
							"rate-limit api local", "rate-limit telemetry open", "budget tenant-daily closed");
					assertThat(series(meters, MicrometerLimitListener.DECISIONS)).contains("rate-limit api fallback",
							"rate-limit telemetry fallback", "budget tenant-daily fallback")
						.doesNotContain("concurrency provider fallback");
					// Only what an in-memory store decides: the local fallback of 'api', the local cap.
					assertThat(series(meters, "rate.limit.memory.overflow.decisions"))
						.containsExactlyInAnyOrder("rate-limit api", "concurrency provider");
					Limits limits = context.getBean(Limits.class);
					own.kill();
					Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
						try {
							limits.reserve("tenant-daily", "acme", "0.01");
							return false;
						}
						catch (RateLimitBackendUnavailableException closed) {
							return true;
						}
					});
					assertThat(meters.get(MicrometerLimitListener.FALLBACKS).tag("policy", "tenant-daily")
						.tag("mode", "closed").counter().count()).isPositive();
					assertThat(meters.get(MicrometerLimitListener.FALLBACKS).tag("policy", "api").counter().count())
						.isZero();
					limits.tryAcquire("api", "bob", 1);
					assertThat(meters.get(MicrometerLimitListener.FALLBACKS).tag("policy", "api").counter().count())
						.isOne();
				});
		}
		finally {
			own.close();
		}
	}

	/** Each series of a meter as its tags' values in a fixed order: kind, policy or budget, then the rest. */
	private static Set<String> series(SimpleMeterRegistry meters, String name) {
		Set<String> series = new TreeSet<>();
		for (Meter meter : meters.find(name).meters()) {
			List<String> values = new ArrayList<>();
			for (String tag : List.of("kind", "store", "policy", "budget", "priority", "outcome", "mode", "reason")) {
				String value = meter.getId().getTag(tag);
				if (value != null) {
					values.add(value);
				}
			}
			series.add(String.join(" ", values));
		}
		return series;
	}

	private static double count(Meter meter) {
		if (meter instanceof Counter counter) {
			return counter.count();
		}
		if (meter instanceof FunctionCounter counter) {
			return counter.count();
		}
		// Gauges (keys held, permits in use) are not counters: 0 before any call too.
		return 0;
	}

	private static double decisions(SimpleMeterRegistry meters, String kind, String policy, String outcome) {
		return meters.get(MicrometerLimitListener.DECISIONS)
			.tag("kind", kind)
			.tag("policy", policy)
			.tag("outcome", outcome)
			.counter()
			.count();
	}

	@Configuration(proxyBeanMethods = false)
	static class InlineLimitConfiguration {

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

		@Bean
		Runs runs() {
			return new Runs();
		}

	}

	static class Runs {

		@RateLimited(value = "inline-runs", capacity = "3", refill = "1/1m")
		public String run(String user) {
			return "ran";
		}

	}

}
