package dev.ratelimit.autoconfigure;

import java.util.List;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.ConfigurationPropertiesBinding;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.expression.BeanFactoryResolver;

import dev.ratelimit.concurrency.ConcurrencyLimiters;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.Limits;
import dev.ratelimit.core.LimitDefinition;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.LimitListener;
import dev.ratelimit.core.NamedLimits;
import dev.ratelimit.concurrency.DistributedConcurrencyLimiter;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.LimitRegistry;
import dev.ratelimit.web.ClientIpResolver;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitConfigurationException;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.Sleeper;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.live.InMemoryOverrideStore;
import dev.ratelimit.live.LimitOverrides;
import dev.ratelimit.live.OverrideStore;
import dev.ratelimit.memory.InMemoryRateLimitBackend;
import dev.ratelimit.core.RateLimitPolicy;

/**
 * Auto-configuration of the rate limiter: named policies, keys, the backend
 * chosen by {@code rate-limit.backend}, the {@code @RateLimited} aspect and, in
 * servlet applications, the route filter and the HTTP contract.
 */
@AutoConfiguration(afterName = { "org.springframework.boot.autoconfigure.aop.AopAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
		"org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration" })
@ConditionalOnProperty(prefix = "rate-limit", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
@Import({ InMemoryBackendConfiguration.class, RedisBackendConfiguration.class,
		RedisBackendConfiguration.RedisMissing.class, RateLimitAnnotationConfiguration.class,
		RateLimitWebContractConfiguration.class, RateLimitWebConfiguration.class,
		RateLimitReactiveWebConfiguration.class, RateLimitMetricsConfiguration.class,
		RateLimitObservationConfiguration.class, RateLimitBudgetConfiguration.class,
		RateLimitConcurrencyConfiguration.class, RateLimitRefreshConfiguration.class,
		RateLimitClientConfiguration.class, RateLimitInsightConfiguration.class })
public class RateLimitAutoConfiguration {

	// Static: the binder asks for converters when it first binds, maybe before this class exists.

	@Bean
	@ConfigurationPropertiesBinding
	static StringToRefillConverter rateLimitRefillConverter() {
		return new StringToRefillConverter();
	}

	@Bean
	@ConfigurationPropertiesBinding
	static StringToBudgetWindowConverter rateLimitBudgetWindowConverter() {
		return new StringToBudgetWindowConverter();
	}

	@Bean
	@ConfigurationPropertiesBinding
	static StringToAmountConverter rateLimitAmountConverter() {
		return new StringToAmountConverter();
	}

	@Bean
	@ConfigurationPropertiesBinding
	static NumberToAmountConverter rateLimitNumberAmountConverter() {
		return new NumberToAmountConverter();
	}

	@Bean
	@ConditionalOnMissingBean
	TimeSource rateLimitTimeSource() {
		return TimeSource.system();
	}

	@Bean
	@ConditionalOnMissingBean
	KeyExpressions rateLimitKeyExpressions(BeanFactory beanFactory, ObjectProvider<LimitListener> listeners) {
		// Listeners are looked up at the first defaulted plan: metrics beans may need this one first.
		return new KeyExpressions(new BeanFactoryResolver(beanFactory), new LazyLimitListener(listeners));
	}

	@Bean
	@ConditionalOnMissingBean
	LimitRegistry rateLimitRegistry(RateLimitProperties properties, KeyExpressions expressions,
			ObjectProvider<DistributedConcurrencyLimiter> distributed) {
		// The properties were checked when bound; what is left to check depends on the beans.
		List<LimitDefinition<RateLimitPolicy>> rateLimits = LimitPropertiesBinder.POLICIES
			.bindAll(properties.getPolicies(), expressions);
		List<LimitDefinition<BudgetPolicy>> budgets = LimitPropertiesBinder.BUDGETS.bindAll(properties.getBudgets(),
				expressions);
		List<LimitDefinition<ConcurrencyPolicy>> caps = ConcurrencyPropertiesBinder.checkDistributed(
				LimitPropertiesBinder.CONCURRENCY.bindAll(properties.getConcurrency(), expressions),
				distributed.getIfAvailable() != null);
		try {
			return new LimitRegistry(NamedLimits.of(LimitKind.RATE_LIMIT, rateLimits),
					NamedLimits.of(LimitKind.BUDGET, budgets), NamedLimits.of(LimitKind.CONCURRENCY, caps));
		}
		catch (IllegalArgumentException ex) {
			throw new RateLimitConfigurationException(String.valueOf(ex.getMessage()),
					"Give each rate-limit policy, budget and concurrency cap a name of its own: a name in a header, "
							+ "a metric or the ratelimits endpoint must mean one limit.",
					ex);
		}
	}

	@Bean
	@ConditionalOnMissingBean
	OverrideStore rateLimitOverrideStore() {
		// The Redis backend's store, shared by every instance, is defined before this one when it applies.
		return new InMemoryOverrideStore();
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	LimitOverrides rateLimitOverrides(LimitRegistry registry, OverrideStore store, RateLimitProperties properties) {
		LimitOverrides overrides = new LimitOverrides(registry, store);
		// Here, while the application starts: overrides made before a restart apply to its first decisions.
		overrides.start(properties.getRedis().getOverridesPollInterval());
		return overrides;
	}

	@Bean
	@ConditionalOnMissingBean
	LimitKeys rateLimitKeys(RateLimitProperties properties) {
		return new LimitKeys(properties.getKeyPrefix(), properties.getMaxKeyLength());
	}

	@Bean
	@ConditionalOnMissingBean
	ClientIpResolver rateLimitClientIpResolver(RateLimitProperties properties) {
		return ClientIpPropertiesBinder.bind(properties.getClientIp());
	}

	@Bean
	@ConditionalOnMissingBean
	Limits rateLimitLimits(LimitRegistry registry, RateLimiter limiter, ObjectProvider<CostBudgets> budgets,
			ConcurrencyLimiters concurrency) {
		// No budget configured, no CostBudgets bean: every budget name is unknown to the API.
		return new Limits(registry, limiter, budgets.getIfAvailable(), concurrency);
	}

	@Bean
	@ConditionalOnMissingBean
	InMemoryKeyBounds rateLimitInMemoryKeyBounds(RateLimitProperties properties) {
		return InMemoryKeyBounds.of(properties.getMemory());
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimiter rateLimiter(RateLimitBackend backend, LimitKeys keys, ObjectProvider<Sleeper> sleeper,
			ObjectProvider<LimitListener> listeners, TimeSource timeSource, InMemoryKeyBounds bounds) {
		// A remote backend gets an in-memory twin for policies with failure-mode local.
		RateLimitBackend localFallback = (backend instanceof InMemoryRateLimitBackend) ? null
				: new InMemoryRateLimitBackend(timeSource, bounds.rateLimits());
		Sleeper configured = sleeper.getIfAvailable();
		return new RateLimiter(backend, keys, (configured != null) ? configured : Sleeper.system(), localFallback,
				LimitListener.of(listeners.orderedStream().toList()));
	}

}
