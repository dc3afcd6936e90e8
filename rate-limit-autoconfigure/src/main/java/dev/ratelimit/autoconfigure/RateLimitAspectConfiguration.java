package dev.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.aop.CostBudgetAspect;
import dev.ratelimit.aop.ConcurrencyAspect;
import dev.ratelimit.aop.ConcurrencyMethods;
import dev.ratelimit.aop.CostBudgetMethods;
import dev.ratelimit.aop.RateLimitAspect;
import dev.ratelimit.aop.RateLimitedMethods;
import dev.ratelimit.aop.RateLimitedMethodsValidator;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.concurrency.ConcurrencyLimiters;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.key.RequestBinding;

/**
 * The aspect enforcing {@code @RateLimited}, and the start-up check of every
 * annotated method. Requires AspectJ (spring-boot-starter-aspectj).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = "org.aspectj.weaver.Advice")
class RateLimitAspectConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RateLimitedMethods rateLimitedMethods(LimitRegistry limits, KeyExpressions expressions,
			Environment environment) {
		return new RateLimitedMethods(limits.rateLimits(), expressions, environment::resolveRequiredPlaceholders);
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitAspect rateLimitAspect(RateLimitedMethods methods, KeyExpressions expressions, RateLimiter limiter,
			ObjectProvider<RequestBinding> requestBinding, RateLimitProperties properties) {
		return new RateLimitAspect(methods, expressions, limiter, requestBinding.getIfAvailable(() -> RequestBinding.NONE),
				properties.getAspect().getOrder());
	}

	@Bean
	@ConditionalOnMissingBean
	CostBudgetMethods costBudgetMethods(LimitRegistry limits, KeyExpressions expressions, Environment environment) {
		return new CostBudgetMethods(limits.budgets(), expressions, environment::resolveRequiredPlaceholders);
	}

	@Bean
	@ConditionalOnMissingBean
	CostBudgetAspect costBudgetAspect(CostBudgetMethods methods, KeyExpressions expressions, CostBudgets budgets,
			ObjectProvider<RequestBinding> requestBinding, RateLimitProperties properties) {
		// Inside the rate-limit advice: a call refused by a rate limit reserves nothing.
		return new CostBudgetAspect(methods, expressions, budgets,
				requestBinding.getIfAvailable(() -> RequestBinding.NONE), properties.getAspect().getOrder() + 1);
	}

	@Bean
	@ConditionalOnMissingBean
	ConcurrencyMethods concurrencyMethods(LimitRegistry limits, KeyExpressions expressions,
			Environment environment, ConcurrencyLimiters limiters) {
		return new ConcurrencyMethods(limits.concurrency(), expressions, environment::resolveRequiredPlaceholders,
				limiters.supportsDistributed());
	}

	@Bean
	@ConditionalOnMissingBean
	ConcurrencyAspect concurrencyAspect(ConcurrencyMethods methods, KeyExpressions expressions,
			ConcurrencyLimiters limiters, ObjectProvider<RequestBinding> requestBinding,
			RateLimitProperties properties) {
		// Innermost: the permit is held only while the method itself runs.
		return new ConcurrencyAspect(methods, expressions, limiters,
				requestBinding.getIfAvailable(() -> RequestBinding.NONE), properties.getAspect().getOrder() + 2);
	}

	@Bean
	RateLimitedMethodsValidator rateLimitedMethodsValidator(ConfigurableListableBeanFactory beanFactory,
			RateLimitedMethods methods, CostBudgetMethods budgets, ConcurrencyMethods concurrency,
			LimitRegistry limits, RateLimitProperties properties) {
		return new RateLimitedMethodsValidator(beanFactory, methods, budgets, concurrency, limits,
				routeUsages(properties));
	}

	/** Route rules as text, per policy they list, for the start-up report. */
	private static Map<String, List<String>> routeUsages(RateLimitProperties properties) {
		Map<String, List<String>> usages = new LinkedHashMap<>();
		for (RateLimitProperties.Route route : properties.getRoutes()) {
			String text = "route " + route.getPattern() + (route.getMethods().isEmpty() ? "" : " " + route.getMethods());
			for (String policy : route.getPolicies()) {
				usages.computeIfAbsent(policy.strip(), (p) -> new ArrayList<>()).add(text);
			}
		}
		return usages;
	}

}
