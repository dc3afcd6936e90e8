package dev.ratelimit.actuate;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;
import dev.ratelimit.RateLimits;
import dev.ratelimit.actuate.PolicyUsages.AnnotatedMethod;
import dev.ratelimit.actuate.PolicyUsages.Kind;
import dev.ratelimit.aop.BoundBudget;
import dev.ratelimit.aop.ConcurrencyMethods;
import dev.ratelimit.aop.CostBudgetMethods;
import dev.ratelimit.aop.RateLimitedMethods;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.key.BoundPolicy;

/**
 * Fills {@link PolicyUsages} once every singleton exists, with the annotated
 * methods of every bean and the policies they use, as the aspects resolve them
 * (the same resolvers, so names, inline policies and key overrides cannot
 * differ from what is enforced). A policy absent from the configured ones is
 * inline.
 * <p>
 * Methods a proxy cannot intercept (private, static, final) are left out: the
 * policy does not apply there, and the start-up report warns about them.
 */
public final class PolicyUsageScanner implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(PolicyUsageScanner.class);

	private final ConfigurableListableBeanFactory beanFactory;

	private final PolicyUsages usages;

	private final LimitRegistry limits;

	private final Resolvers resolvers;

	/**
	 * Creates a scanner.
	 * @param beanFactory the bean factory whose beans are scanned
	 * @param usages the registry to fill
	 * @param limits the configured limits
	 * @param resolvers the aspects' resolvers, or {@code null} without AspectJ (no
	 * annotation is enforced then)
	 */
	public PolicyUsageScanner(ConfigurableListableBeanFactory beanFactory, PolicyUsages usages,
			LimitRegistry limits, Resolvers resolvers) {
		this.beanFactory = beanFactory;
		this.usages = usages;
		this.limits = limits;
		this.resolvers = resolvers;
	}

	@Override
	public void afterSingletonsInstantiated() {
		List<AnnotatedMethod> methods = new ArrayList<>();
		List<RateLimitPolicy> inlineRateLimits = new ArrayList<>();
		List<ConcurrencyPolicy> inlineConcurrency = new ArrayList<>();
		Set<Class<?>> seen = new HashSet<>();
		for (String name : (this.resolvers != null) ? this.beanFactory.getBeanDefinitionNames() : new String[0]) {
			Class<?> type = typeOf(name);
			if (type == null || !seen.add(ClassUtils.getUserClass(type)) || !isCandidate(type)) {
				continue;
			}
			Class<?> userClass = ClassUtils.getUserClass(type);
			ReflectionUtils.doWithMethods(userClass, (method) -> {
				String where = userClass.getName() + "#" + method.getName();
				if (RateLimitedMethods.isLimited(method)) {
					for (BoundPolicy bound : this.resolvers.rateLimits().resolve(method, type).policies()) {
						boolean inline = this.limits.rateLimits().find(bound.policy().name()).isEmpty();
						methods.add(new AnnotatedMethod(Kind.RATE_LIMIT, bound.policy().name(), where,
								bound.policy().key(), inline));
						if (inline) {
							inlineRateLimits.add(bound.policy());
						}
					}
				}
				if (CostBudgetMethods.isBudgeted(method)) {
					for (BoundBudget bound : this.resolvers.budgets().resolve(method, type).budgets()) {
						methods.add(new AnnotatedMethod(Kind.BUDGET, bound.policy().name(), where,
								bound.key().getExpressionString(), false));
					}
				}
				if (AnnotatedElementUtils.hasAnnotation(method, Concurrency.class)) {
					ConcurrencyPolicy policy = this.resolvers.concurrency().resolve(method, type).policy();
					boolean inline = this.limits.concurrency().find(policy.name()).isEmpty();
					methods.add(new AnnotatedMethod(Kind.CONCURRENCY, policy.name(), where, policy.key(), inline));
					if (inline) {
						inlineConcurrency.add(policy);
					}
				}
			}, PolicyUsageScanner::isInterceptable);
		}
		this.usages.setMethods(methods, inlineRateLimits, inlineConcurrency);
	}

	private Class<?> typeOf(String beanName) {
		try {
			return this.beanFactory.getType(beanName, false);
		}
		catch (RuntimeException ex) {
			// A bean whose type cannot be predicted has no annotations we could read either.
			logger.debug("Cannot determine the type of bean '" + beanName + "'", ex);
			return null;
		}
	}

	private static boolean isCandidate(Class<?> type) {
		return AnnotationUtils.isCandidateClass(type, RateLimited.class)
				|| AnnotationUtils.isCandidateClass(type, RateLimits.class)
				|| AnnotationUtils.isCandidateClass(type, CostBudget.class)
				|| AnnotationUtils.isCandidateClass(type, Concurrency.class);
	}

	/** Whether a class proxy can advise the method: package-private and protected ones included. */
	private static boolean isInterceptable(Method method) {
		int modifiers = method.getModifiers();
		return !method.isBridge() && !method.isSynthetic() && !Modifier.isPrivate(modifiers)
				&& !Modifier.isStatic(modifiers) && !Modifier.isFinal(modifiers);
	}

	/**
	 * The resolvers of the three annotations.
	 *
	 * @param rateLimits resolves {@code @RateLimited}
	 * @param budgets resolves {@code @CostBudget}
	 * @param concurrency resolves {@code @Concurrency}
	 */
	public record Resolvers(RateLimitedMethods rateLimits, CostBudgetMethods budgets,
			ConcurrencyMethods concurrency) {
	}

}
