package dev.ratelimit.live;

import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.context.environment.EnvironmentChangeEvent;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.MapPropertySource;

import dev.ratelimit.Limits;
import dev.ratelimit.support.RedisServerFixture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A refreshed configuration (Spring Cloud's {@link EnvironmentChangeEvent},
 * with Spring Cloud's own refresh beans in the context) on both backends: a
 * new capacity applies to the next decision, and a bad value is refused with a
 * log line while the old numbers stay.
 */
@ExtendWith(OutputCaptureExtension.class)
class RefreshTests {

	private static final RedisServerFixture redis = RedisServerFixture.start();

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@Test
	void aNewCapacityAppliesToTheNextDecisionOnMemory(CapturedOutput output) {
		newCapacityAppliesToTheNextDecision(Map.of(), output);
	}

	@Test
	void aNewCapacityAppliesToTheNextDecisionOnRedis(CapturedOutput output) {
		newCapacityAppliesToTheNextDecision(redisProperties(), output);
	}

	@Test
	void aBadValueIsRefusedAndTheOldNumbersStayOnMemory(CapturedOutput output) {
		badValueIsRefused(Map.of(), output);
	}

	@Test
	void aBadValueIsRefusedAndTheOldNumbersStayOnRedis(CapturedOutput output) {
		badValueIsRefused(redisProperties(), output);
	}

	@Test
	void addedLimitsAndRouteChangesAreLoggedAsNeedingARestart(CapturedOutput output) {
		try (ConfigurableApplicationContext context = start(Map.of())) {
			refresh(context, Map.of("rate-limit.policies.added.capacity", "1", "rate-limit.policies.added.refill",
					"1/1s", "rate-limit.routes[0].pattern", "/x/**", "rate-limit.routes[0].policies", "burst"));

			assertThat(output).contains("adds rate-limit.policies.added; that needs a restart");
			assertThat(output).containsPattern("Changed properties \\[.*rate-limit.routes\\[0\\].pattern.*\\] apply at "
					+ "the next restart");
		}
	}

	@Test
	void anUnrelatedRefreshRebuildsNoLimitOfAnyKind(CapturedOutput output) {
		try (ConfigurableApplicationContext context = start(Map.of())) {
			refresh(context, Map.of("rate-limit.policies.other.capacity", "4"));

			assertThat(output).contains("Refreshed rate-limit.policies.other:");
			// Every kind, with plans, key overrides and exempt ranges: equal values are not a change.
			assertThat(output).doesNotContain("Refreshed rate-limit.policies.burst")
				.doesNotContain("Refreshed rate-limit.policies.tiered")
				.doesNotContain("Refreshed rate-limit.budgets.spend")
				.doesNotContain("Refreshed rate-limit.concurrency.calls");
		}
	}

	@Test
	void newNumbersOfALimitWhosePlansSetThemAreWarnedAboutAndTheOthersSayWhomTheyReach(CapturedOutput output) {
		try (ConfigurableApplicationContext context = start(Map.of())) {
			// Every plan of tiered, and its listed key, sets its own capacity.
			refresh(context, Map.of("rate-limit.policies.tiered.capacity", "7"));

			assertThat(output).contains("Refreshed rate-limit.policies.tiered: {capacity=2, refill=2/1h}")
				.contains("changes no caller's numbers")
				.contains("The refreshed numbers of rate-limit.policies.tiered {capacity=7, refill=2/1h} change no "
						+ "caller's limit: every caller is decided by one of its plans [free, pro] (without a plan by "
						+ "the default plan 'free'), and each sets these numbers itself; set "
						+ "rate-limit.policies.tiered.plans.<plan>.* instead");

			// None of them sets its refill.
			refresh(context, Map.of("rate-limit.policies.tiered.refill", "3/1h"));
			assertThat(output)
				.contains("changes the numbers of plan 'free', plan 'pro', the listed keys [partner]")
				.doesNotContain("The refreshed numbers of rate-limit.policies.tiered {capacity=7, refill=3/1h}");
		}
	}

	private void newCapacityAppliesToTheNextDecision(Map<String, String> backend, CapturedOutput output) {
		try (ConfigurableApplicationContext context = start(backend)) {
			Limits limits = context.getBean(Limits.class);
			assertThat(burst(limits, "before")).isEqualTo(2);

			refresh(context, Map.of("rate-limit.policies.burst.capacity", "5"));

			assertThat(burst(limits, "after")).isEqualTo(5);
			assertThat(output).contains("Refreshed rate-limit.policies.burst: {capacity=2, refill=1/1h} -> "
					+ "{capacity=5, refill=1/1h}");
		}
	}

	private void badValueIsRefused(Map<String, String> backend, CapturedOutput output) {
		try (ConfigurableApplicationContext context = start(backend)) {
			Limits limits = context.getBean(Limits.class);

			refresh(context, Map.of("rate-limit.policies.burst.capacity", "-3", "rate-limit.policies.other.capacity",
					"9"));

			assertThat(output).contains("Refused the refreshed rate-limit configuration")
				.contains("rate-limit.policies.burst.capacity with value '-3'");
			assertThat(burst(limits, "k")).isEqualTo(2);
			// All or nothing: the valid change of the same refresh is not applied either.
			assertThat(burstOf(limits, "other", "k")).isEqualTo(1);

			refresh(context, Map.of("rate-limit.policies.burst.refill", "fast"));
			assertThat(output).contains("rate-limit.policies.burst.refill").contains("fast");
			assertThat(burst(limits, "k2")).isEqualTo(2);
		}
	}

	private static int burst(Limits limits, String key) {
		return burstOf(limits, "burst", key);
	}

	private static int burstOf(Limits limits, String policy, String key) {
		int allowed = 0;
		while (allowed < 20 && limits.tryAcquire(policy, key, 1).allowed()) {
			allowed++;
		}
		return allowed;
	}

	private static void refresh(ConfigurableApplicationContext context, Map<String, Object> changed) {
		// What Spring Cloud's ContextRefresher does: new property values, then the event naming them.
		context.getEnvironment()
			.getPropertySources()
			.addFirst(new MapPropertySource("refreshed-" + System.nanoTime(), changed));
		context.publishEvent(new EnvironmentChangeEvent(context, Set.copyOf(changed.keySet())));
	}

	private static Map<String, String> redisProperties() {
		redis.flushAll();
		return Map.of("rate-limit.backend", "redis", "spring.data.redis.host", "127.0.0.1", "spring.data.redis.port",
				Integer.toString(redis.port()));
	}

	private static ConfigurableApplicationContext start(Map<String, String> backend) {
		SpringApplicationBuilder builder = new SpringApplicationBuilder(RefreshApplication.class)
			.web(WebApplicationType.NONE)
			.properties("rate-limit.policies.burst.capacity=2", "rate-limit.policies.burst.refill=1/1h",
					"rate-limit.policies.burst.key=global", "rate-limit.policies.other.capacity=1",
					"rate-limit.policies.other.refill=1/1h", "rate-limit.policies.other.key=global",
					"rate-limit.policies.tiered.capacity=2", "rate-limit.policies.tiered.refill=2/1h",
					"rate-limit.policies.tiered.plan=header('X-Plan')", "rate-limit.policies.tiered.default-plan=free",
					"rate-limit.policies.tiered.plans.free.capacity=2", "rate-limit.policies.tiered.plans.pro.capacity=9",
					"rate-limit.policies.tiered.overrides.partner.capacity=50",
					"rate-limit.policies.tiered.exempt.cidrs=10.0.0.0/8,::1/128",
					"rate-limit.budgets.spend.amount=1", "rate-limit.budgets.spend.window=day",
					"rate-limit.budgets.spend.plan=header('X-Plan')", "rate-limit.budgets.spend.default-plan=free",
					"rate-limit.budgets.spend.plans.free.amount=1", "rate-limit.budgets.spend.plans.pro.amount=5",
					"rate-limit.budgets.spend.exempt.cidrs=192.168.0.0/16", "rate-limit.concurrency.calls.permits=2",
					"rate-limit.concurrency.calls.overrides.partner.permits=8",
					"rate-limit.concurrency.calls.exempt.cidrs=172.16.0.0/12");
		backend.forEach((name, value) -> builder.properties(name + "=" + value));
		return builder.run();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class RefreshApplication {

	}

}
