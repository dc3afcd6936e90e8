package dev.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import org.springframework.aot.AotDetector;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.client.ProviderClients;
import dev.ratelimit.core.RateLimitConfigurationException;
import dev.ratelimit.redis.RedisLimiterConnection;
import dev.ratelimit.web.RouteLimits;

/**
 * Refuses to start an application processed ahead of time whose properties now
 * ask for a limiter it was not processed with. Under Spring AOT
 * ({@code -Dspring.aot.enabled=true}) the auto-configuration's conditions were
 * evaluated when the application was processed, and its beans are what they
 * said then: a start with {@code rate-limit.backend=redis} on an application
 * processed with the default {@code memory} would count in each instance's
 * memory, every instance allowing the whole limit, while everyone believed the
 * limits shared. The properties whose value picks beans are checked against
 * the beans there are; everything else the starter reads at run time, as on
 * the JVM. Without AOT it does nothing: the conditions saw these properties.
 */
final class ProcessedConditions implements SmartInitializingSingleton {

	private static final String ACTION = "Spring AOT evaluates conditions when it processes the application: process "
			+ "it (spring-boot:process-aot) with the rate-limit properties it runs with, or start it without "
			+ "-Dspring.aot.enabled=true.";

	private final Environment environment;

	private final ListableBeanFactory beans;

	private final boolean processed;

	ProcessedConditions(Environment environment, ListableBeanFactory beans) {
		this(environment, beans, AotDetector.useGeneratedArtifacts());
	}

	ProcessedConditions(Environment environment, ListableBeanFactory beans, boolean processed) {
		this.environment = environment;
		this.beans = beans;
		this.processed = processed;
	}

	@Override
	public void afterSingletonsInstantiated() {
		if (!this.processed) {
			return;
		}
		List<String> mismatches = mismatches();
		if (!mismatches.isEmpty()) {
			throw new RateLimitConfigurationException("This application was processed ahead of time with other "
					+ "rate-limit properties than it starts with: " + String.join("; ", mismatches) + ".", ACTION,
					null);
		}
	}

	/** What the properties ask for that the processed beans do not do, each said in a phrase. */
	List<String> mismatches() {
		List<String> mismatches = new ArrayList<>();
		boolean enabled = this.environment.getProperty("rate-limit.enabled", Boolean.class, true);
		boolean limiter = has(LimitRegistry.class);
		if (enabled != limiter) {
			mismatches.add("rate-limit.enabled is " + enabled + ", but the limiter was processed "
					+ (limiter ? "on" : "off"));
		}
		if (!enabled || !limiter) {
			return mismatches;
		}
		String backend = this.environment.getProperty("rate-limit.backend", "memory");
		// Without Lettuce there is no Redis backend, and the class asked for could not be loaded to ask.
		boolean redis = ClassUtils.isPresent("io.lettuce.core.RedisClient", getClass().getClassLoader())
				&& has(RedisLimiterConnection.class);
		if (backend.equalsIgnoreCase("redis") != redis) {
			mismatches.add("rate-limit.backend is " + backend + ", but the application was processed with the "
					+ (redis ? "redis" : "memory") + " backend");
		}
		if (OnConfiguredCondition.configured(this.environment, "rate-limit.budgets") && !has(CostBudgets.class)) {
			mismatches.add("rate-limit.budgets are configured, but the application was processed without budgets");
		}
		if (OnConfiguredCondition.configured(this.environment, "rate-limit.routes") && has(RouteLimits.class)
				&& !has(ManagementPaths.class)) {
			// A web application processed without route rules has no route filter: the rules would go unenforced.
			// (The route filter's configuration, servlet or reactive, is the one place ManagementPaths is made.)
			mismatches.add("rate-limit.routes are configured, but the application was processed without route rules");
		}
		if (OnConfiguredCondition.configured(this.environment, "rate-limit.clients")
				&& ClassUtils.isPresent("org.springframework.web.client.RestClient", getClass().getClassLoader())
				&& !has(ProviderClients.class)) {
			mismatches.add("rate-limit.clients are configured, but the application was processed without clients");
		}
		return mismatches;
	}

	private boolean has(Class<?> type) {
		return this.beans.getBeanNamesForType(type, true, false).length > 0;
	}

}
