package dev.ratelimit.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.beans.factory.SmartInitializingSingleton;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.budget.Amounts;
import dev.ratelimit.budget.BudgetLimit;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.concurrency.AdaptiveLimit;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.AbstractLimit;
import dev.ratelimit.core.Durations;
import dev.ratelimit.core.Exemption;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitDefinition;
import dev.ratelimit.core.LiveLimit;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Visibility;
import dev.ratelimit.key.AppliedLimit;
import dev.ratelimit.key.BoundPolicy;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.key.RequestBinding;

/**
 * Checks and reports, once every singleton exists, where each limit applies:
 * <ul>
 * <li>resolves every {@link dev.ratelimit.RateLimited}, {@link dev.ratelimit.CostBudget} and
 * {@link dev.ratelimit.Concurrency} method, so that an unknown policy, an invalid inline value
 * or an unparsable expression stops the application at start-up instead of
 * failing the first request;</li>
 * <li>warns about annotated methods a Spring proxy cannot intercept (private,
 * static or final), which would silently not be limited;</li>
 * <li>logs where the limits are kept (the backend), then one line per policy
 * saying where it applies (route rules and methods) and what keys it, and
 * warns about policies that apply nowhere;</li>
 * <li>with a remote backend, warns in one line about the limits that would go
 * unchecked while it cannot answer (failure mode open).</li>
 * </ul>
 */
public final class RateLimitedMethodsValidator implements SmartInitializingSingleton, AopInfrastructureBean {

	private static final Log logger = LogFactory.getLog(RateLimitedMethodsValidator.class);

	private final AnnotatedBeans beans;

	private final LimitAnnotations annotations;

	private final LimitRegistry policies;

	private final Map<String, List<String>> routeUsages;

	private final String backend;

	private final Map<String, List<String>> clientUsages;

	private final boolean remote;

	private final @Nullable KeyExpressions expressions;

	private final RequestBinding requests;

	private final Map<String, Map<String, String>> keyResolvers;

	/**
	 * Creates a validator.
	 * @param beans the limited methods of the beans checked
	 * @param annotations the resolver of the annotations
	 * @param policies the configured policies, budgets and caps
	 * @param routeUsages the route rules naming each rate-limit policy, as text
	 * @param backend where the limits are kept, as the report's first line says it
	 */
	public RateLimitedMethodsValidator(AnnotatedBeans beans, LimitAnnotations annotations, LimitRegistry policies,
			Map<String, List<String>> routeUsages, String backend) {
		this(beans, annotations, policies, routeUsages, Map.of(), backend, false);
	}

	/**
	 * Creates a validator that also reports the limits provider clients use.
	 * @param beans the limited methods of the beans checked
	 * @param annotations the resolver of the annotations
	 * @param policies the configured policies, budgets and caps
	 * @param routeUsages the route rules naming each rate-limit policy, as text
	 * @param clientUsages the provider clients naming each rate-limit policy or
	 * concurrency cap, as text
	 * @param backend where the limits are kept, as the report's first line says it
	 * @param remote whether the limits are kept in a store outside this process
	 * (Redis), which can fail to answer: then the limits that fail open are named
	 */
	public RateLimitedMethodsValidator(AnnotatedBeans beans, LimitAnnotations annotations, LimitRegistry policies,
			Map<String, List<String>> routeUsages, Map<String, List<String>> clientUsages, String backend,
			boolean remote) {
		this(beans, annotations, policies, routeUsages, clientUsages, backend, remote, null, RequestBinding.NONE);
	}

	/**
	 * Creates a validator that also names the limited methods whose keys read
	 * a request that is never in reach of their calls.
	 * @param beans the limited methods of the beans checked
	 * @param annotations the resolver of the annotations
	 * @param policies the configured policies, budgets and caps
	 * @param routeUsages the route rules naming each rate-limit policy, as text
	 * @param clientUsages the provider clients naming each rate-limit policy or
	 * concurrency cap, as text
	 * @param backend where the limits are kept, as the report's first line says it
	 * @param remote whether the limits are kept in a store outside this process
	 * @param expressions tells which keys read the request; {@code null} to check none
	 * @param requests tells which methods are called with no request in reach
	 */
	public RateLimitedMethodsValidator(AnnotatedBeans beans, LimitAnnotations annotations, LimitRegistry policies,
			Map<String, List<String>> routeUsages, Map<String, List<String>> clientUsages, String backend,
			boolean remote, @Nullable KeyExpressions expressions, RequestBinding requests) {
		this(beans, annotations, policies, routeUsages, clientUsages, backend, remote, expressions, requests, Map.of());
	}

	/**
	 * Creates a validator that also says which places key a policy by a key
	 * resolver of their own rather than by the policy's key (a gateway
	 * route's {@code RequestRateLimiter}).
	 * @param beans the limited methods of the beans checked
	 * @param annotations the resolver of the annotations
	 * @param policies the configured policies, budgets and caps
	 * @param routeUsages the route rules naming each rate-limit policy, as text
	 * @param clientUsages the provider clients naming each rate-limit policy or
	 * concurrency cap, as text
	 * @param backend where the limits are kept, as the report's first line says it
	 * @param remote whether the limits are kept in a store outside this process
	 * @param expressions tells which keys read the request; {@code null} to check none
	 * @param requests tells which methods are called with no request in reach
	 * @param keyResolvers by policy name, what keys each place that keys it
	 * itself, as text, by the place as {@code routeUsages} names it
	 */
	public RateLimitedMethodsValidator(AnnotatedBeans beans, LimitAnnotations annotations, LimitRegistry policies,
			Map<String, List<String>> routeUsages, Map<String, List<String>> clientUsages, String backend,
			boolean remote, @Nullable KeyExpressions expressions, RequestBinding requests,
			Map<String, Map<String, String>> keyResolvers) {
		this.keyResolvers = keyResolvers;
		this.expressions = expressions;
		this.requests = requests;
		this.beans = beans;
		this.annotations = annotations;
		this.policies = policies;
		this.routeUsages = routeUsages;
		this.clientUsages = clientUsages;
		this.backend = backend;
		this.remote = remote;
	}

	@Override
	public void afterSingletonsInstantiated() {
		// Loops rather than lambdas, here and in the report: each lambda is a class spun at start-up.
		Usages usages = new Usages();
		for (Map.Entry<String, List<String>> routes : this.routeUsages.entrySet()) {
			for (String route : routes.getValue()) {
				usages.add("rate", routes.getKey(), route);
			}
		}
		for (Map.Entry<String, List<String>> clients : this.clientUsages.entrySet()) {
			String limit = clients.getKey();
			String kind = this.policies.rateLimits().live(limit).isPresent() ? "rate" : "concurrency";
			for (String client : clients.getValue()) {
				usages.add(kind, limit, client);
			}
		}
		for (AnnotatedBeans.AnnotatedMethod annotated : this.beans.methods()) {
			String where = annotated.where();
			if (!annotated.interceptable()) {
				logger.warn("Method " + where + " is annotated for rate limiting but is "
						+ modifiers(annotated.method()) + ": Spring proxies cannot intercept it, so it will NOT be "
						+ "limited. Make it public and non-final, and call it through the bean (not from its own "
						+ "class).");
				continue;
			}
			MethodLimits limits = this.annotations.resolve(annotated.method(), annotated.beanType());
			warnOfKeysWithoutRequest(annotated, limits);
			for (BoundPolicy bound : limits.rateLimits()) {
				usages.add("rate", bound.policy().name(), "method " + where);
				usages.describe("rate", bound.policy(), bound.applied().definition());
			}
			for (BoundBudget bound : limits.budgets()) {
				usages.add("budget", bound.policy().name(), "method " + where);
			}
			if (limits.cap() != null) {
				ConcurrencyPolicy policy = limits.cap().policy();
				usages.add("concurrency", policy.name(), "method " + where);
				usages.describe("concurrency", policy, limits.cap().applied().definition());
			}
		}
		report(usages);
	}

	/**
	 * Warns of a method whose calls never have a request in reach while one of
	 * its limits is keyed by the request: that key comes out missing on every
	 * call, and the limit's missing-key rule applies to all of them.
	 */
	private void warnOfKeysWithoutRequest(AnnotatedBeans.AnnotatedMethod annotated, MethodLimits limits) {
		KeyExpressions expressions = this.expressions;
		String why = (expressions != null) ? this.requests.requestOutOfReach(annotated.method(), annotated.beanType())
				: null;
		if (why == null || expressions == null) {
			return;
		}
		List<AppliedLimit<?>> applied = new ArrayList<>();
		limits.rateLimits().forEach((bound) -> applied.add(bound.applied()));
		limits.budgets().forEach((bound) -> applied.add(bound.applied()));
		if (limits.cap() != null) {
			applied.add(limits.cap().applied());
		}
		List<String> keyed = new ArrayList<>();
		for (AppliedLimit<?> limit : applied) {
			if (expressions.readsRequest(limit.key())) {
				keyed.add(noun(limit.limit()) + " '" + limit.limit().name() + "' (key "
						+ limit.key().getExpressionString() + ", " + withoutKey(limit.limit()) + ")");
			}
		}
		if (!keyed.isEmpty()) {
			logger.warn("Method " + annotated.where() + " is limited by " + String.join(", ", keyed)
					+ ", keyed by the request, but " + why + ": its key will come out missing on every call, "
					+ "and the limit's missing-key rule applies to all of them (with missing-key shared, every "
					+ "caller in one bucket). Key it by the method's arguments, or return Mono or Flux.");
		}
	}

	private void report(Usages usages) {
		logger.info("Rate limiter backend: " + this.backend);
		for (LiveLimit<RateLimitPolicy> policy : this.policies.rateLimits().lives()) {
			usages.describe("rate", policy.current().limit(), policy.current());
		}
		for (LiveLimit<BudgetPolicy> budget : this.policies.budgets().lives()) {
			usages.describe("budget", budget.current().limit(), budget.current());
		}
		for (LiveLimit<ConcurrencyPolicy> cap : this.policies.concurrency().lives()) {
			usages.describe("concurrency", cap.current().limit(), cap.current());
		}
		for (Map.Entry<String, LimitDefinition<?>> described : usages.definitions.entrySet()) {
			// Described once every place is known: what keys a policy depends on where it applies.
			String id = described.getKey();
			String description = describe(Objects.requireNonNull(usages.limits.get(id)), usages)
					+ following(described.getValue());
			List<String> places = usages.places.getOrDefault(id, List.of());
			if (places.isEmpty()) {
				logger.warn(description + " is configured but applies nowhere: no route rule, annotated method "
						+ "or provider client uses it");
			}
			else if (logger.isInfoEnabled()) {
				logger.info(description + " applies to " + String.join(", ", places));
			}
		}
		if (this.remote) {
			warnAboutFailOpen(usages.limits.values());
		}
	}

	/**
	 * Names, in one warning, the limits that a store outage would remove: with
	 * the memory backend there is no such outage, so nothing is said.
	 */
	private static void warnAboutFailOpen(Collection<Limit> limits) {
		List<String> unlimited = limits.stream()
			.filter(Limit::failsOpen)
			.sorted(Comparator.comparing(Limit::kind).thenComparing(Limit::name))
			.map((limit) -> noun(limit) + " '" + limit.name() + "'")
			.toList();
		if (!unlimited.isEmpty()) {
			logger.warn("Unlimited during a Redis outage (failure-mode open): " + String.join(", ", unlimited)
					+ ". While Redis does not answer (down, unreachable, or frozen for rate-limit.redis.timeout) "
					+ "these limits let every call through unchecked; set failure-mode: local to keep limiting "
					+ "in each instance, or closed to refuse the calls");
		}
	}

	/** What a limit does with a call whose key is missing. */
	private static String withoutKey(Limit limit) {
		return switch (limit.kind()) {
			case RATE_LIMIT -> "missing-key " + ((RateLimitPolicy) limit).missingKey().name().toLowerCase();
			case BUDGET -> "refused without a key";
			case CONCURRENCY -> "one count for every caller without a key";
		};
	}

	private static String noun(Limit limit) {
		return switch (limit.kind()) {
			case RATE_LIMIT -> "rate limit policy";
			case BUDGET -> "budget";
			case CONCURRENCY -> "concurrency cap";
		};
	}

	private static String modifiers(Method method) {
		int modifiers = method.getModifiers();
		List<String> words = new ArrayList<>();
		if (Modifier.isPrivate(modifiers)) {
			words.add("private");
		}
		if (Modifier.isStatic(modifiers)) {
			words.add("static");
		}
		if (Modifier.isFinal(modifiers)) {
			words.add("final");
		}
		return String.join(" ", words);
	}

	/**
	 * How a limit reads in the report, by its kind: tests of its type rather than
	 * a switch on its kind, which would load one more class at every start.
	 */
	private String describe(Limit limit, Usages usages) {
		if (limit instanceof RateLimitPolicy policy) {
			return describe(policy, usages);
		}
		if (limit instanceof BudgetPolicy budget) {
			return describe(budget);
		}
		return describe((ConcurrencyPolicy) limit);
	}

	private String describe(RateLimitPolicy policy, Usages usages) {
		String numbers = policy.algorithm().isRateBased() ? policy.capacity() + ", refill " + policy.refill()
				: policy.capacity() + " per " + Durations.format(policy.windowMicros());
		return "Rate limit policy '" + policy.name() + "' (" + policy.algorithm().name().toLowerCase().replace('_', '-')
				+ " " + numbers + ", " + key(policy, usages) + ", failure-mode "
				+ policy.failureMode().name().toLowerCase() + (policy.shadow() ? ", shadow" : "")
				+ ((policy.prefetch() > 0) ? ", prefetch " + policy.prefetch() : "") + visibility(policy.visibility()) + ")";
	}

	/**
	 * What keys a policy: its key, or where a place keys it by a resolver of
	 * its own ({@code RequestRateLimiter}'s), that resolver, the policy's key
	 * being read only in the other places.
	 */
	private String key(RateLimitPolicy policy, Usages usages) {
		Map<String, String> resolvers = this.keyResolvers.getOrDefault(policy.name(), Map.of());
		if (resolvers.isEmpty()) {
			return "key " + policy.key();
		}
		String by = "by " + String.join(", ", resolvers.values());
		boolean elsewhere = usages.places.getOrDefault("rate:" + policy.name(), List.of())
			.stream()
			.anyMatch((place) -> !resolvers.containsKey(place));
		return elsewhere ? "key " + policy.key() + " (" + by + ")" : "key " + by;
	}

	private static String describe(BudgetPolicy budget) {
		StringBuilder limits = new StringBuilder();
		for (BudgetLimit limit : budget.limits()) {
			limits.append(limits.isEmpty() ? "" : " and ")
				.append(Amounts.format(limit.amountMicros()))
				.append(' ')
				.append(budget.unit())
				.append(" per ")
				.append(limit.window());
		}
		return "Budget '" + budget.name() + "' (" + limits + ", key " + budget.key() + ", failure-mode "
				+ budget.failureMode().name().toLowerCase() + visibility(budget.visibility()) + ")";
	}

	private static String describe(ConcurrencyPolicy cap) {
		AdaptiveLimit adaptive = cap.adaptive();
		if (adaptive != null) {
			StringBuilder shares = new StringBuilder();
			cap.shedding().shares().entrySet().stream().sorted(Map.Entry.comparingByKey())
				.filter((share) -> share.getValue() > 0)
				.forEach((share) -> shares.append(", ").append(share.getKey().label()).append(' ')
					.append(share.getValue()).append('%'));
			return "Adaptive concurrency cap '" + cap.name() + "' (" + adaptive.algorithm().name().toLowerCase()
					+ ", limit from " + adaptive.initialLimit() + " between " + adaptive.minLimit() + " and "
					+ adaptive.maxLimit() + ", local, "
					+ (AbstractLimit.DEFAULT_KEY.equals(cap.key()) ? "no priority: every call alike"
							: "priority " + cap.key() + shares + ", else " + cap.shedding().defaultPriority().label())
					+ (cap.shadow() ? ", shadow" : "") + ")";
		}
		// A local cap never asks Redis, so only a distributed one has a failure mode worth reading.
		String failureMode = (cap.scope() == ConcurrencyPolicy.Scope.DISTRIBUTED)
				? ", failure-mode " + cap.failureMode().name().toLowerCase() : "";
		return "Concurrency cap '" + cap.name() + "' (" + cap.permits() + " permits, "
				+ cap.scope().name().toLowerCase() + ", key " + cap.key() + failureMode + visibility(cap.visibility())
				+ ")";
	}

	/**
	 * Says how a limit follows the caller, when it does: its plans, its key
	 * overrides and its exemption.
	 */
	private static String following(LimitDefinition<?> definition) {
		StringBuilder text = new StringBuilder();
		if (definition.planExpression() != null) {
			text.append(", plans ").append(definition.planQuotas()).append(" named by ")
				.append(definition.planExpression()).append(" (default ").append(definition.defaultPlan()).append(')');
		}
		if (!definition.keyQuotas().isEmpty()) {
			text.append(", own numbers for ").append(definition.keyQuotas().size()).append(" listed key value(s)");
		}
		Exemption exempt = definition.exemption();
		if (!exempt.isNone()) {
			text.append(", exempt:");
			if (!exempt.cidrs().isEmpty()) {
				text.append(" addresses ").append(exempt.cidrs());
			}
			if (!exempt.roles().isEmpty()) {
				text.append(" roles ").append(exempt.roles());
			}
			if (exempt.when() != null) {
				text.append(" when ").append(exempt.when());
			}
		}
		return text.toString();
	}

	/** Says so when a limit is told to callers, or hidden from them, by choice rather than by default. */
	private static String visibility(Visibility visibility) {
		return (visibility == Visibility.AUTO) ? "" : ", " + visibility.name().toLowerCase();
	}

	/** Where each policy applies, and how it reads in a log line. */
	private static final class Usages {

		final Map<String, List<String>> places = new LinkedHashMap<>();

		/** The definition each limit is described with (its plans, key overrides, exemption), by id. */
		final Map<String, LimitDefinition<?>> definitions = new LinkedHashMap<>();

		final Map<String, Limit> limits = new LinkedHashMap<>();

		void add(String kind, String policy, String place) {
			String id = kind + ":" + policy;
			List<String> list = this.places.get(id);
			if (list == null) {
				list = new ArrayList<>();
				this.places.put(id, list);
			}
			if (!list.contains(place)) {
				list.add(place);
			}
		}

		void describe(String kind, Limit limit, LimitDefinition<?> definition) {
			this.definitions.putIfAbsent(kind + ":" + limit.name(), definition);
			this.limits.putIfAbsent(kind + ":" + limit.name(), limit);
		}

	}

}
