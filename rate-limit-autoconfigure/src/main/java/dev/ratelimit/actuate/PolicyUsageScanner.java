package dev.ratelimit.actuate;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.UnaryOperator;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.RateLimited;
import dev.ratelimit.RateLimits;
import dev.ratelimit.actuate.PolicyUsages.AnnotatedMethod;
import dev.ratelimit.actuate.PolicyUsages.Kind;
import dev.ratelimit.budget.BudgetPolicies;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.concurrency.ConcurrencyPolicies;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Durations;
import dev.ratelimit.core.RateLimitPolicies;
import dev.ratelimit.core.RateLimitPolicy;

/**
 * Fills {@link PolicyUsages} once every singleton exists, by scanning the bean
 * types for {@link RateLimited}, {@link CostBudget} and {@link Concurrency}
 * methods. Inline policies are named as the aspects name them:
 * {@code ClassName.methodName} unless the annotation names them.
 * <p>
 * Methods a proxy cannot intercept (private, static, final) are left out: the
 * policy does not apply there. The scan only describes: an annotation it cannot make sense of (an unknown
 * policy, an invalid inline value) is recorded without its policy and never
 * fails start-up, since reporting those with a clear message is the job of the
 * aspects' own start-up validation.
 */
public final class PolicyUsageScanner implements SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(PolicyUsageScanner.class);

	private final ConfigurableListableBeanFactory beanFactory;

	private final PolicyUsages usages;

	private final RateLimitPolicies rateLimits;

	private final BudgetPolicies budgets;

	private final ConcurrencyPolicies concurrency;

	private final UnaryOperator<String> placeholders;

	/**
	 * Creates a scanner.
	 * @param beanFactory the bean factory whose beans are scanned
	 * @param usages the registry to fill
	 * @param rateLimits the configured rate-limit policies
	 * @param budgets the configured budgets
	 * @param concurrency the configured concurrency policies
	 * @param placeholders resolves {@code ${...}} in attribute values, leaving
	 * unresolvable ones as they are
	 */
	public PolicyUsageScanner(ConfigurableListableBeanFactory beanFactory, PolicyUsages usages,
			RateLimitPolicies rateLimits, BudgetPolicies budgets, ConcurrencyPolicies concurrency,
			UnaryOperator<String> placeholders) {
		this.beanFactory = beanFactory;
		this.usages = usages;
		this.rateLimits = rateLimits;
		this.budgets = budgets;
		this.concurrency = concurrency;
		this.placeholders = placeholders;
	}

	@Override
	public void afterSingletonsInstantiated() {
		Found found = new Found();
		Set<Class<?>> seen = new HashSet<>();
		for (String name : this.beanFactory.getBeanDefinitionNames()) {
			Class<?> type = typeOf(name);
			if (type != null && seen.add(ClassUtils.getUserClass(type))) {
				scan(ClassUtils.getUserClass(type), found);
			}
		}
		this.usages.setMethods(found.methods, found.inlineRateLimits, found.inlineConcurrency);
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

	private void scan(Class<?> type, Found found) {
		boolean rateLimited = AnnotationUtils.isCandidateClass(type, RateLimited.class)
				|| AnnotationUtils.isCandidateClass(type, RateLimits.class);
		boolean budgeted = AnnotationUtils.isCandidateClass(type, CostBudget.class);
		boolean capped = AnnotationUtils.isCandidateClass(type, Concurrency.class);
		if (!rateLimited && !budgeted && !capped) {
			return;
		}
		for (Method method : ReflectionUtils.getUniqueDeclaredMethods(type, ReflectionUtils.USER_DECLARED_METHODS)) {
			if (!isInterceptable(method)) {
				// A proxy never sees the call, so the policy does not apply there (start-up warns about it).
				continue;
			}
			String where = type.getName() + "#" + method.getName();
			if (rateLimited) {
				for (RateLimited annotation : AnnotatedElementUtils.findMergedRepeatableAnnotations(method,
						RateLimited.class)) {
					rateLimit(annotation, method, where, found);
				}
			}
			if (budgeted) {
				for (CostBudget annotation : AnnotatedElementUtils.findMergedRepeatableAnnotations(method,
						CostBudget.class)) {
					budget(annotation, where, found);
				}
			}
			if (capped) {
				Concurrency annotation = AnnotatedElementUtils.findMergedAnnotation(method, Concurrency.class);
				if (annotation != null) {
					concurrency(annotation, method, where, found);
				}
			}
		}
	}

	private void rateLimit(RateLimited annotation, Method method, String where, Found found) {
		String name = resolve(annotation.policy());
		String algorithm = resolve(annotation.algorithm());
		String capacity = resolve(annotation.capacity());
		String refill = resolve(annotation.refill());
		String window = resolve(annotation.window());
		String key = resolve(annotation.key());
		String maxWait = resolve(annotation.maxWait());
		// The same test as the aspect's: any inline attribute makes the annotation define its policy.
		boolean inline = !(algorithm.isEmpty() && capacity.isEmpty() && refill.isEmpty() && window.isEmpty());
		String policyName = (inline && name.isEmpty()) ? defaultName(method) : name;
		if (policyName.isEmpty()) {
			return;
		}
		RateLimitPolicy policy = null;
		try {
			RateLimitPolicy.Builder builder = inline ? inlineRateLimit(policyName, algorithm, capacity, refill, window)
					: this.rateLimits.find(policyName).map((named) -> named.toBuilder(policyName)).orElse(null);
			if (builder != null) {
				if (!key.isEmpty()) {
					builder.key(key);
				}
				if (!maxWait.isEmpty()) {
					builder.maxWaitMicros(Durations.parseMicros("max-wait", maxWait));
				}
				policy = builder.build();
			}
		}
		catch (RuntimeException ex) {
			logger.debug("Cannot describe the @RateLimited policy of " + where, ex);
		}
		found.methods.add(new AnnotatedMethod(Kind.RATE_LIMIT, policyName, where,
				(policy != null) ? policy.key() : emptyToNull(key), inline));
		if (inline && policy != null) {
			found.inlineRateLimits.add(policy);
		}
	}

	private static RateLimitPolicy.Builder inlineRateLimit(String name, String algorithm, String capacity,
			String refill, String window) {
		RateLimitPolicy.Builder builder = RateLimitPolicy.builder(name);
		if (!algorithm.isEmpty()) {
			builder.algorithm(Algorithm.valueOf(algorithm.replace('-', '_').toUpperCase(Locale.ROOT)));
		}
		builder.capacity(Long.parseLong(capacity));
		if (!refill.isEmpty()) {
			builder.refill(refill);
		}
		if (!window.isEmpty()) {
			builder.window(window);
		}
		return builder;
	}

	private void budget(CostBudget annotation, String where, Found found) {
		String name = resolve(annotation.policy());
		if (name.isEmpty()) {
			return;
		}
		String key = resolve(annotation.key());
		String policyKey = this.budgets.find(name).map(BudgetPolicy::key).orElse(null);
		found.methods.add(new AnnotatedMethod(Kind.BUDGET, name, where, key.isEmpty() ? policyKey : key, false));
	}

	private void concurrency(Concurrency annotation, Method method, String where, Found found) {
		String name = resolve(annotation.policy());
		String permits = resolve(annotation.permits());
		String scope = resolve(annotation.scope());
		String key = resolve(annotation.key());
		String maxWait = resolve(annotation.maxWait());
		boolean inline = !permits.isEmpty();
		String policyName = (inline && name.isEmpty()) ? defaultName(method) : name;
		if (policyName.isEmpty()) {
			return;
		}
		ConcurrencyPolicy policy = null;
		try {
			policy = inline ? inlineConcurrency(policyName, permits, scope, key, maxWait)
					: this.concurrency.find(policyName).orElse(null);
		}
		catch (RuntimeException ex) {
			logger.debug("Cannot describe the @Concurrency policy of " + where, ex);
		}
		String policyKey = (policy != null) ? policy.key() : null;
		found.methods.add(new AnnotatedMethod(Kind.CONCURRENCY, policyName, where,
				key.isEmpty() ? policyKey : key, inline));
		if (inline && policy != null) {
			found.inlineConcurrency.add(policy);
		}
	}

	private static ConcurrencyPolicy inlineConcurrency(String name, String permits, String scope, String key,
			String maxWait) {
		ConcurrencyPolicy.Builder builder = ConcurrencyPolicy.builder(name).permits(Integer.parseInt(permits)).key(key);
		if (!scope.isEmpty()) {
			builder.scope(ConcurrencyPolicy.Scope.valueOf(scope.toUpperCase(Locale.ROOT)));
		}
		if (!maxWait.isEmpty()) {
			builder.maxWait(Duration.ofNanos(Durations.parseMicros("max-wait", maxWait) * 1_000L));
		}
		return builder.build();
	}

	/** Whether a class proxy can advise the method: package-private and protected ones included. */
	private static boolean isInterceptable(Method method) {
		int modifiers = method.getModifiers();
		return !Modifier.isPrivate(modifiers) && !Modifier.isStatic(modifiers) && !Modifier.isFinal(modifiers);
	}

	private static String defaultName(Method method) {
		return method.getDeclaringClass().getSimpleName() + "." + method.getName();
	}

	private String resolve(String value) {
		try {
			return this.placeholders.apply(value).strip();
		}
		catch (RuntimeException ex) {
			return value.strip();
		}
	}

	private static String emptyToNull(String value) {
		return value.isEmpty() ? null : value;
	}

	/** What one scan found. */
	private static final class Found {

		final List<AnnotatedMethod> methods = new ArrayList<>();

		final List<RateLimitPolicy> inlineRateLimits = new ArrayList<>();

		final List<ConcurrencyPolicy> inlineConcurrency = new ArrayList<>();

	}

}
