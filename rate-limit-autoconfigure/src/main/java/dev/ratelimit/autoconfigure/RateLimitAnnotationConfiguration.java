package dev.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.Advisor;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.aop.AnnotatedBeans;
import dev.ratelimit.aop.LimitAnnotations;
import dev.ratelimit.aop.LimitInterceptor;
import dev.ratelimit.aop.LimitPointcut;
import dev.ratelimit.aop.LimitedMethods;
import dev.ratelimit.aop.ProxyExemptions;
import dev.ratelimit.aop.RateLimitedMethodsValidator;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.concurrency.ConcurrencyLimiters;
import dev.ratelimit.core.LimitListener;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.key.RequestBinding;
import dev.ratelimit.memory.InMemoryRateLimitBackend;

/**
 * The advice enforcing {@code @RateLimited}, {@code @CostBudget} and
 * {@code @Concurrency} (one advisor for the three, applied by whichever
 * auto-proxy creator the application has: Spring AOP's infrastructure one,
 * registered here when there is none, or AspectJ's), and the start-up check
 * of every annotated method.
 */
@Configuration(proxyBeanMethods = false)
@Import(AutoProxyCreatorRegistrar.class)
class RateLimitAnnotationConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LimitAnnotations rateLimitAnnotations(LimitRegistry limits, KeyExpressions expressions, Environment environment,
			ConcurrencyLimiters concurrency) {
		return new LimitAnnotations(limits, expressions, environment::resolveRequiredPlaceholders,
				concurrency.supportsDistributed());
	}

	/**
	 * The interceptor, created with the context (not at the first limited call:
	 * a request thread never creates a bean, and whatever its creation checks
	 * fails the start).
	 */
	@Bean
	@ConditionalOnMissingBean
	LimitInterceptor rateLimitInterceptor(LimitAnnotations annotations, KeyExpressions expressions,
			RateLimiter limiter, ObjectProvider<CostBudgets> budgets, ConcurrencyLimiters concurrency,
			ObjectProvider<RequestBinding> requestBinding, ObjectProvider<LimitListener> listeners) {
		// Without a configured budget no method can name one (the start-up check refuses it).
		RequestBinding requests = requestBinding.getIfAvailable();
		return new LimitInterceptor(annotations, expressions, limiter, budgets.getIfAvailable(), concurrency,
				(requests != null) ? requests : RequestBinding.NONE, LimitListener.of(listeners.orderedStream().toList()));
	}

	/**
	 * Which methods carry limits, worked out once per class: shared by the
	 * pointcut, which asks about every bean's class, and the start-up scan.
	 */
	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static LimitedMethods rateLimitLimitedMethods() {
		return new LimitedMethods();
	}

	/**
	 * The advisor, created with the auto-proxy creator, before most beans: it
	 * fetches the interceptor (and with it the limiter and its backend) on the
	 * first limited call, so that creating it initialises nothing early.
	 */
	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static Advisor rateLimitAdvisor(LimitedMethods limitedMethods, ObjectProvider<LimitInterceptor> interceptor,
			ObjectProvider<ProxyExemptions> exemptions, Environment environment) {
		LimitPointcut pointcut = new LimitPointcut(limitedMethods, exemptions(exemptions));
		DefaultPointcutAdvisor advisor = new DefaultPointcutAdvisor(pointcut, lazyAdvice(interceptor));
		// Runs outside transaction, cache and retry advice (which default to the lowest precedence),
		// so that a refused call starts none of them.
		advisor.setOrder(environment.getProperty("rate-limit.aspect.order", Integer.class, 0));
		return advisor;
	}

	/**
	 * The limit advice, fetched at its first call and kept: what the proxies
	 * apply, and what the handler adapter applies to the controllers it limits
	 * without one.
	 */
	static MethodInterceptor lazyAdvice(ObjectProvider<LimitInterceptor> interceptor) {
		return new LazyAdvice(interceptor);
	}

	/** The one walk over the beans' methods, for the start-up report and the {@code ratelimits} endpoint. */
	@Bean
	@ConditionalOnMissingBean
	AnnotatedBeans rateLimitAnnotatedBeans(ConfigurableListableBeanFactory beanFactory,
			LimitedMethods limitedMethods, ObjectProvider<ProxyExemptions> exemptions) {
		return new AnnotatedBeans(beanFactory, limitedMethods, exemptions(exemptions));
	}

	// Start-up code: a null check rather than a lambda, each of which is one more class to spin at start-up.
	private static ProxyExemptions exemptions(ObjectProvider<ProxyExemptions> exemptions) {
		ProxyExemptions found = exemptions.getIfAvailable();
		return (found != null) ? found : ProxyExemptions.NONE;
	}

	@Bean
	RateLimitedMethodsValidator rateLimitedMethodsValidator(AnnotatedBeans beans, LimitAnnotations annotations,
			LimitRegistry limits, RateLimitProperties properties, RateLimitBackend backend,
			ObjectProvider<PolicyPlaces> places, KeyExpressions expressions, ObjectProvider<RequestBinding> requests,
			ObjectProvider<ManagementPaths> management) {
		Map<String, List<String>> routeUsages = routeUsages(properties);
		// The same test as the limiter's: only a backend outside this process can fail to answer.
		Map<String, List<String>> clientUsages = clientUsages(properties, management.getIfAvailable());
		Map<String, Map<String, String>> keyResolvers = new LinkedHashMap<>();
		// Loops rather than lambdas here and below: each lambda is a class spun at start-up.
		for (PolicyPlaces more : places.orderedStream().toList()) {
			addAll(routeUsages, more.rateLimitPlaces());
			addAll(clientUsages, more.capPlaces());
			for (Map.Entry<String, Map<String, String>> by : more.keyResolvers().entrySet()) {
				Map<String, String> resolvers = keyResolvers.get(by.getKey());
				if (resolvers == null) {
					resolvers = new LinkedHashMap<>();
					keyResolvers.put(by.getKey(), resolvers);
				}
				resolvers.putAll(by.getValue());
			}
		}
		RequestBinding requestBinding = requests.getIfAvailable();
		return new RateLimitedMethodsValidator(beans, annotations, limits, routeUsages,
				clientUsages, backend(properties), !(backend instanceof InMemoryRateLimitBackend),
				expressions, (requestBinding != null) ? requestBinding : RequestBinding.NONE, keyResolvers);
	}

	private static void addAll(Map<String, List<String>> usages, Map<String, List<String>> more) {
		for (Map.Entry<String, List<String>> where : more.entrySet()) {
			usagesOf(usages, where.getKey()).addAll(where.getValue());
		}
	}

	/** The places of one limit, added to the map when it has none yet. */
	private static List<String> usagesOf(Map<String, List<String>> usages, String limit) {
		List<String> places = usages.get(limit);
		if (places == null) {
			places = new ArrayList<>();
			usages.put(limit, places);
		}
		return places;
	}

	/**
	 * The provider clients naming each rate-limit policy or concurrency cap, and
	 * the route rules naming each cap, for the start-up report: a rule whose
	 * caps would cover the management endpoints says whether they do.
	 */
	private static Map<String, List<String>> clientUsages(RateLimitProperties properties,
			@Nullable ManagementPaths management) {
		Map<String, List<String>> usages = new LinkedHashMap<>();
		for (RateLimitProperties.Route route : properties.getRoutes()) {
			String text = "route " + route.getPattern() + (route.getMethods().isEmpty() ? "" : " " + route.getMethods())
					+ managementNote(route, management);
			for (String cap : route.getConcurrency()) {
				usagesOf(usages, cap.strip()).add(text);
			}
		}
		for (Map.Entry<String, RateLimitProperties.Client> named : properties.getClients().entrySet()) {
			String name = named.getKey();
			RateLimitProperties.Client client = named.getValue();
			String where = "provider client '" + name + "' (rate-limit.clients." + name + ")";
			if (client.getRateLimit() != null) {
				usagesOf(usages, client.getRateLimit()).add(where);
			}
			if (client.getConcurrency() != null) {
				usagesOf(usages, client.getConcurrency()).add(where);
			}
		}
		return usages;
	}

	/** What a route rule's caps do to the management endpoints, when it matches them. */
	private static String managementNote(RateLimitProperties.Route route, @Nullable ManagementPaths management) {
		String pattern = route.getPattern();
		if (management == null || pattern == null || route.getConcurrency().isEmpty()) {
			return "";
		}
		return management.note(pattern, route.getConcurrency());
	}

	/** Where the limits are kept, for the start-up report. */
	private static String backend(RateLimitProperties properties) {
		return switch (properties.getBackend()) {
			case MEMORY -> "memory (rate-limit.backend): limits are kept in this process, so each instance counts "
					+ "alone; at most " + properties.getMemory().getMaxKeys() + " keys per policy";
			case REDIS -> "redis (rate-limit.backend): limits are shared exactly by every instance through Redis";
		};
	}

	/** Route rules as text, per policy they list, for the start-up report. */
	private static Map<String, List<String>> routeUsages(RateLimitProperties properties) {
		Map<String, List<String>> usages = new LinkedHashMap<>();
		for (RateLimitProperties.Route route : properties.getRoutes()) {
			String text = "route " + route.getPattern() + (route.getMethods().isEmpty() ? "" : " " + route.getMethods());
			for (String policy : route.getPolicies()) {
				usagesOf(usages, policy.strip()).add(text);
			}
		}
		return usages;
	}

	/**
	 * The limit advice, fetching the interceptor bean at its first call: one
	 * class where a supplier and a lambda would be two spun at start-up.
	 */
	static final class LazyAdvice implements MethodInterceptor {

		private final ObjectProvider<LimitInterceptor> interceptor;

		private volatile @Nullable LimitInterceptor advice;

		LazyAdvice(ObjectProvider<LimitInterceptor> interceptor) {
			this.interceptor = interceptor;
		}

		@Override
		public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
			LimitInterceptor advice = this.advice;
			if (advice == null) {
				// A singleton: calls racing here get the same one from the bean factory.
				advice = this.interceptor.getObject();
				this.advice = advice;
			}
			return advice.invoke(invocation);
		}

	}

}
