package dev.ratelimit.concurrency;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import dev.ratelimit.support.StartupFailures;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

/**
 * An adaptive cap from properties, and a clear start-up error naming the
 * property for each setting that would be ignored or cannot hold.
 */
class AdaptiveCapConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class))
		.withPropertyValues("rate-limit.concurrency.api.adaptive.algorithm=gradient2",
				"rate-limit.concurrency.api.priority=header('X-Priority')");

	@Test
	void propertiesBindToAnAdaptiveCap() {
		this.contextRunner
			.withPropertyValues("rate-limit.concurrency.api.adaptive.initial-limit=10",
					"rate-limit.concurrency.api.adaptive.min-limit=2", "rate-limit.concurrency.api.adaptive.max-limit=50",
					"rate-limit.concurrency.api.adaptive.timeout=2s", "rate-limit.concurrency.api.adaptive.rtt-tolerance=2",
					"rate-limit.concurrency.api.adaptive.long-window=5000",
					"rate-limit.concurrency.api.shares.critical=60", "rate-limit.concurrency.api.shares.normal=10",
					"rate-limit.concurrency.api.default-priority=normal", "rate-limit.concurrency.api.retry-after=2s",
					"rate-limit.concurrency.api.retry-after-spread=8s", "rate-limit.concurrency.api.shadow=true")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				ConcurrencyPolicy cap = context.getBean(LimitRegistry.class).concurrency().find("api").orElseThrow();
				assertThat(cap.adaptive()).isEqualTo(new AdaptiveLimit(AdaptiveLimit.Algorithm.GRADIENT2, 10, 2, 50,
						2_000_000L, null, 2.0, null, null, 5000));
				// The classes not listed keep their default shares.
				assertThat(cap.shedding().shares()).containsOnly(entry(Priority.CRITICAL, 60), entry(Priority.NORMAL, 10),
						entry(Priority.BACKGROUND, 5), entry(Priority.SHEDDABLE, 0));
				assertThat(cap.shedding().defaultPriority()).isEqualTo(Priority.NORMAL);
				assertThat(cap.shedding().retryAfterMicros(0.999)).isEqualTo(10_000_000L);
				assertThat(cap.shadow()).isTrue();
				assertThat(cap.key()).isEqualTo("header('X-Priority')");
				assertThat(cap.permits()).isEqualTo(50);
				assertThat(cap.rejection()).isEqualTo(ConcurrencyPolicy.Rejection.SERVICE_UNAVAILABLE);
				assertThat(context.getBean(ConcurrencyLimiters.class).mayBlock(cap)).isFalse();
			});
	}

	@Test
	void aClassTheSharesDoNotListKeepsItsDefaultShare() {
		this.contextRunner
			.withPropertyValues("rate-limit.concurrency.api.shares.critical=50",
					"rate-limit.concurrency.api.shares.normal=20")
			.run((context) -> {
				ConcurrencyPolicy cap = context.getBean(LimitRegistry.class).concurrency().find("api").orElseThrow();
				assertThat(cap.shedding().shares()).containsOnly(entry(Priority.CRITICAL, 50), entry(Priority.NORMAL, 20),
						entry(Priority.BACKGROUND, 5), entry(Priority.SHEDDABLE, 0));
			});
	}

	@Test
	void sharesThatPassTheWholeLimitWithTheDefaultsNameTheDefaults() {
		assertFails("rate-limit.concurrency.api.shares.critical=80", "rate-limit.concurrency.api.shares",
				"add up to 115% with the default share of each class not listed (background 5%)",
				"rate-limit.concurrency.api.shares.normal=30");
		this.contextRunner
			.withPropertyValues("rate-limit.concurrency.api.shares.critical=80",
					"rate-limit.concurrency.api.shares.normal=20", "rate-limit.concurrency.api.shares.background=0")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void withoutAPriorityExpressionEveryCallMayUseTheWholeLimit() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class))
			.withPropertyValues("rate-limit.concurrency.api.adaptive.algorithm=vegas")
			.run((context) -> {
				ConcurrencyPolicy cap = context.getBean(LimitRegistry.class).concurrency().find("api").orElseThrow();
				assertThat(cap.shedding().shares()).isEmpty();
			});
	}

	@Test
	void settingsThatWouldBeIgnoredOrCannotHoldAreStartupErrors() {
		assertFails("rate-limit.concurrency.api.permits=10", "rate-limit.concurrency.api.permits", "max-limit");
		assertFails("rate-limit.concurrency.api.key=ip", "rate-limit.concurrency.api.key", "priority");
		assertFails("rate-limit.concurrency.api.scope=distributed", "rate-limit.concurrency.api.scope", "local");
		assertFails("rate-limit.concurrency.api.max-wait=1s", "rate-limit.concurrency.api.max-wait", "sheds at once");
		assertFails("rate-limit.concurrency.api.visibility=public", "rate-limit.concurrency.api.visibility",
				"name no limit");
		assertFails("rate-limit.concurrency.api.shares.critical=80", "rate-limit.concurrency.api.shares", "120%",
				"rate-limit.concurrency.api.shares.normal=40", "rate-limit.concurrency.api.shares.background=0");
		assertFails("rate-limit.concurrency.api.adaptive.backoff-ratio=0.8",
				"rate-limit.concurrency.api.adaptive.backoff-ratio", "aimd only");
		assertFails("rate-limit.concurrency.api.adaptive.long-window=5", "rate-limit.concurrency.api.adaptive.long-window",
				"at least 10");
		assertFails("rate-limit.concurrency.api.adaptive.min-limit=30", "rate-limit.concurrency.api.adaptive.initial-limit",
				"between min-limit (30)");
		assertFails("rate-limit.concurrency.api.retry-after=500ms", "rate-limit.concurrency.api.retry-after",
				"whole seconds");
		assertFails("rate-limit.concurrency.api.plans.pro.permits=5", "rate-limit.concurrency.api.plans",
				"no plans or overrides");
	}

	@Test
	void adaptiveSettingsOnAFixedCapAndSharesWithoutPriorityAreStartupErrors() {
		ApplicationContextRunner fixed = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class))
			.withPropertyValues("rate-limit.concurrency.pool.permits=4");
		fixed.withPropertyValues("rate-limit.concurrency.pool.shadow=true")
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains("rate-limit.concurrency.pool.shadow")
				.contains("adaptive caps only"));
		fixed.withPropertyValues("rate-limit.concurrency.pool.adaptive.max-limit=50")
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains("rate-limit.concurrency.pool.adaptive.algorithm")
				.contains("gradient2, vegas or aimd"));
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class))
			.withPropertyValues("rate-limit.concurrency.api.adaptive.algorithm=aimd",
					"rate-limit.concurrency.api.shares.critical=50")
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains("rate-limit.concurrency.api.shares")
				.contains("priority"));
	}

	@Test
	void aRouteRuleNamingAnUnknownCapIsAStartupError() {
		this.contextRunner.withPropertyValues("rate-limit.routes[0].pattern=/**", "rate-limit.routes[0].concurrency=apj")
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains("rate-limit.routes[0].concurrency")
				.contains("apj")
				.contains("[api]"));
	}

	@Test
	void aProviderClientCannotUseAnAdaptiveCap() {
		this.contextRunner
			.withPropertyValues("rate-limit.clients.llm.base-url=https://llm.example", "rate-limit.clients.llm.concurrency=api")
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription())
				.contains("rate-limit.clients.llm.concurrency")
				.contains("adaptive"));
	}

	private void assertFails(String property, String named, String reason, String... more) {
		this.contextRunner.withPropertyValues(property).withPropertyValues(more)
			.run((context) -> assertThat(StartupFailures.analyze(context).getDescription()).as(property)
				.contains(named)
				.contains(reason));
	}

}
