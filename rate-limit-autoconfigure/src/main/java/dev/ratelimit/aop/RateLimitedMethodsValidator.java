package dev.ratelimit.aop;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.annotation.AnnotationUtils;

import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;
import dev.ratelimit.RateLimits;

/**
 * Resolves every {@link RateLimited} and {@link CostBudget} method of every bean once all singletons
 * exist, so that an unknown policy, an invalid inline value or an unparsable
 * expression stops the application at start-up instead of failing the first
 * request.
 */
public final class RateLimitedMethodsValidator implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(RateLimitedMethodsValidator.class);

	private final ConfigurableListableBeanFactory beanFactory;

	private final RateLimitedMethods methods;

	private final CostBudgetMethods budgets;

	private final ConcurrencyMethods concurrency;

	/**
	 * Creates a validator.
	 * @param beanFactory the bean factory whose beans are checked
	 * @param methods the resolver of {@code @RateLimited}
	 * @param budgets the resolver of {@code @CostBudget}
	 * @param concurrency the resolver of {@code @Concurrency}
	 */
	public RateLimitedMethodsValidator(ConfigurableListableBeanFactory beanFactory, RateLimitedMethods methods,
			CostBudgetMethods budgets, ConcurrencyMethods concurrency) {
		this.beanFactory = beanFactory;
		this.methods = methods;
		this.budgets = budgets;
		this.concurrency = concurrency;
	}

	@Override
	public void afterSingletonsInstantiated() {
		int count = 0;
		for (String name : this.beanFactory.getBeanDefinitionNames()) {
			Class<?> type = this.beanFactory.getType(name, false);
			if (type != null && (AnnotationUtils.isCandidateClass(type, RateLimited.class)
					|| AnnotationUtils.isCandidateClass(type, RateLimits.class))) {
				count += this.methods.validate(type);
			}
			if (type != null && AnnotationUtils.isCandidateClass(type, CostBudget.class)) {
				count += this.budgets.validate(type);
			}
			if (type != null && AnnotationUtils.isCandidateClass(type, Concurrency.class)) {
				count += this.concurrency.validate(type);
			}
		}
		if (logger.isDebugEnabled()) {
			logger.debug("Validated " + count + " @RateLimited and @CostBudget method(s)");
		}
	}

}
