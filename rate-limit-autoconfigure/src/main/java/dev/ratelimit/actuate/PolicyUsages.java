package dev.ratelimit.actuate;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

import org.springframework.aop.framework.AopInfrastructureBean;

import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.RateLimitPolicy;

/**
 * Where each policy applies: the route rules that list it and the annotated
 * bean methods that use it, plus the policies defined inline in annotations,
 * which no configuration registry holds. Routes are known from the properties
 * at once; methods are added by {@link PolicyUsageScanner} once every singleton
 * exists. Thread-safe: the scanner writes once at start-up, readers see a
 * consistent snapshot.
 */
final class PolicyUsages implements AopInfrastructureBean {

	private final List<Route> routes;

	private volatile Snapshot snapshot = new Snapshot(List.of(), Map.of(), Map.of());

	/**
	 * Creates a registry.
	 * @param routes the route rules, in configuration order
	 */
	public PolicyUsages(List<Route> routes) {
		this.routes = List.copyOf(routes);
	}

	/**
	 * Replaces the annotated methods and inline policies, as found by a scan.
	 * @param methods the annotated methods
	 * @param inlineRateLimits the rate-limit policies defined in annotations
	 * @param inlineConcurrency the concurrency policies defined in annotations
	 */
	public void setMethods(List<AnnotatedMethod> methods, Collection<RateLimitPolicy> inlineRateLimits,
			Collection<ConcurrencyPolicy> inlineConcurrency) {
		Map<String, RateLimitPolicy> rateLimits = new LinkedHashMap<>();
		for (RateLimitPolicy policy : inlineRateLimits) {
			rateLimits.putIfAbsent(policy.name(), policy);
		}
		Map<String, ConcurrencyPolicy> concurrency = new LinkedHashMap<>();
		for (ConcurrencyPolicy policy : inlineConcurrency) {
			concurrency.putIfAbsent(policy.name(), policy);
		}
		this.snapshot = new Snapshot(List.copyOf(methods), rateLimits, concurrency);
	}

	/** @return every route rule */
	public List<Route> routes() {
		return this.routes;
	}

	/** @return every annotated method usage, in scan order */
	public List<AnnotatedMethod> methods() {
		return this.snapshot.methods();
	}

	/**
	 * Returns the route rules that apply a rate-limit policy or a concurrency cap.
	 * @param policy the policy name
	 * @return the rules listing it
	 */
	public List<Route> routesOf(String policy) {
		return this.routes.stream().filter((route) -> route.policies().contains(policy)).toList();
	}

	/**
	 * Returns the annotated methods that use a policy.
	 * @param kind the kind of policy
	 * @param policy the policy name
	 * @return the usages
	 */
	public List<AnnotatedMethod> methodsOf(Kind kind, String policy) {
		List<AnnotatedMethod> found = new ArrayList<>();
		for (AnnotatedMethod method : this.snapshot.methods()) {
			if (method.kind() == kind && method.policy().equals(policy)) {
				found.add(method);
			}
		}
		return found;
	}

	/** @return the rate-limit policies defined inline in annotations, by name */
	public Collection<RateLimitPolicy> inlineRateLimits() {
		return this.snapshot.rateLimits().values();
	}

	/**
	 * Finds a rate-limit policy defined inline in an annotation.
	 * @param name the policy name
	 * @return the policy, with the key and max-wait in force where it is declared
	 */
	public Optional<RateLimitPolicy> inlineRateLimit(String name) {
		return Optional.ofNullable(this.snapshot.rateLimits().get(name));
	}

	/** @return the concurrency policies defined inline in annotations, by name */
	public Collection<ConcurrencyPolicy> inlineConcurrency() {
		return this.snapshot.concurrency().values();
	}

	/**
	 * Finds a concurrency policy defined inline in an annotation.
	 * @param name the policy name
	 * @return the policy
	 */
	public Optional<ConcurrencyPolicy> inlineConcurrency(String name) {
		return Optional.ofNullable(this.snapshot.concurrency().get(name));
	}

	/**
	 * The kinds of policy an annotation can refer to.
	 */
	public enum Kind {

		/** {@code @RateLimited}. */
		RATE_LIMIT,

		/** {@code @CostBudget}. */
		BUDGET,

		/** {@code @Concurrency}. */
		CONCURRENCY;

		/** @return the kind as shown to users: {@code rate-limit}, {@code budget}, {@code concurrency} */
		public String label() {
			return name().toLowerCase(Locale.ROOT).replace('_', '-');
		}

	}

	/**
	 * A route rule from {@code rate-limit.routes}.
	 *
	 * @param pattern the path pattern, or {@code null} when the rule has none (which binding the rules refuses)
	 * @param methods upper-case HTTP methods; empty for every method
	 * @param policies the names of the rate-limit policies and concurrency caps it applies
	 */
	public record Route(@Nullable String pattern, List<String> methods, List<String> policies) {
	}

	/**
	 * One policy used by one annotated method.
	 *
	 * @param kind the annotation's kind
	 * @param policy the policy name ({@code ClassName.methodName} for an unnamed
	 * inline policy)
	 * @param method the method as {@code fully.qualified.Class#method}
	 * @param key the key expression in force at the method: the annotation's
	 * override, else the policy's
	 * @param inline whether the annotation defines the policy itself
	 */
	public record AnnotatedMethod(Kind kind, String policy, String method, String key, boolean inline) {
	}

	private record Snapshot(List<AnnotatedMethod> methods, Map<String, RateLimitPolicy> rateLimits,
			Map<String, ConcurrencyPolicy> concurrency) {
	}

}
