package dev.ratelimit.aop;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

import org.jspecify.annotations.Nullable;

import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;

import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.LimitRegistry;
import dev.ratelimit.RateLimited;
import dev.ratelimit.RateLimits;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.OnOverrun;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.AbstractLimit;
import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Durations;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitDefinition;
import dev.ratelimit.core.LiveLimit;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.NamedLimits;
import dev.ratelimit.core.PolicyValidationException;
import dev.ratelimit.core.RateLimitConfigurationException;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Visibility;
import dev.ratelimit.key.AppliedLimit;
import dev.ratelimit.key.BoundPolicy;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.key.OutcomeRule;

/**
 * Resolves the {@link RateLimited}, {@link CostBudget} and {@link Concurrency}
 * annotations of a method, once, into its limits with their expressions
 * parsed: the one path from annotations to limits, for the interceptor that
 * enforces them, the start-up report and the {@code ratelimits} endpoint.
 * Annotations are found directly on the method or as meta-annotations (a
 * user's {@code @PerUser} annotated with {@code @RateLimited("agent-runs")}).
 * Every attribute's placeholders are resolved, every named limit looked up and
 * every expression parsed here, and every error names the method, the
 * annotation and the attribute, so that a bad annotation stops the application
 * at start-up.
 */
public final class LimitAnnotations implements AopInfrastructureBean {

	private final LimitRegistry limits;

	private final KeyExpressions expressions;

	private final UnaryOperator<String> placeholders;

	private final boolean distributedAvailable;

	private final Map<MethodClassKey, MethodLimits> cache = new ConcurrentHashMap<>();

	/**
	 * Creates a resolver.
	 * @param limits the configured limits
	 * @param expressions the expression parser
	 * @param placeholders resolves {@code ${...}} in attribute values, failing on unresolvable ones
	 * @param distributedAvailable whether distributed concurrency caps can be served (Redis backend)
	 */
	public LimitAnnotations(LimitRegistry limits, KeyExpressions expressions, UnaryOperator<String> placeholders,
			boolean distributedAvailable) {
		this.limits = limits;
		this.expressions = expressions;
		this.placeholders = placeholders;
		this.distributedAvailable = distributedAvailable;
	}

	/**
	 * Returns the limits of a method, resolved on first use.
	 * @param method the invoked method, possibly an interface method
	 * @param targetClass the class of the target bean
	 * @return the method with its limits
	 * @throws RateLimitConfigurationException if an annotation is invalid
	 */
	public MethodLimits resolve(Method method, Class<?> targetClass) {
		MethodClassKey cacheKey = new MethodClassKey(method, targetClass);
		MethodLimits resolved = this.cache.get(cacheKey);
		if (resolved == null) {
			resolved = this.cache.computeIfAbsent(cacheKey, (k) -> doResolve(method, targetClass));
		}
		return resolved;
	}

	private MethodLimits doResolve(Method method, Class<?> targetClass) {
		Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
		Attributes fallback = null;
		List<BoundPolicy> rateLimits = new ArrayList<>();
		for (RateLimited annotation : AnnotatedElementUtils.findMergedRepeatableAnnotations(specific,
				RateLimited.class, RateLimits.class)) {
			Attributes attributes = new Attributes(specific, annotation);
			rateLimits.add(bind(annotation, attributes));
			fallback = namingFallback(fallback, attributes);
		}
		List<BoundBudget> budgets = new ArrayList<>();
		for (CostBudget annotation : AnnotatedElementUtils.findMergedRepeatableAnnotations(specific,
				CostBudget.class, CostBudget.List.class)) {
			Attributes attributes = new Attributes(specific, annotation);
			budgets.add(bind(annotation, attributes));
			fallback = namingFallback(fallback, attributes);
		}
		Concurrency cap = AnnotatedElementUtils.findMergedAnnotation(specific, Concurrency.class);
		BoundCap boundCap = null;
		if (cap != null) {
			Attributes attributes = new Attributes(specific, cap);
			boundCap = bind(cap, attributes);
			fallback = namingFallback(fallback, attributes);
		}
		return new MethodLimits(specific, List.copyOf(rateLimits), List.copyOf(budgets), boundCap,
				(fallback != null) ? fallback.fallback(targetClass) : null);
	}

	/**
	 * Returns the annotation naming the method's fallback, so far: a method has
	 * one fallback for the refusals of all its limits, which any of its
	 * annotations may name, and two naming different ones are an error.
	 * @param named the annotation that named it before, or {@code null}
	 * @param attributes the next annotation
	 */
	private static @Nullable Attributes namingFallback(@Nullable Attributes named, Attributes attributes) {
		String name = attributes.text("fallback");
		if (name.isEmpty()) {
			return named;
		}
		if (named == null || named.text("fallback").equals(name)) {
			return (named != null) ? named : attributes;
		}
		throw attributes.error("it names fallback '" + name + "', but " + named.annotation + " names fallback '"
				+ named.text("fallback") + "': a method has one fallback, for the refusals of all its limits",
				"Name the same fallback on each annotation of the method, or on one of them only.", null);
	}

	private BoundPolicy bind(RateLimited annotation, Attributes attributes) {
		String name = attributes.text("policy");
		String capacity = attributes.text("capacity");
		String refill = attributes.text("refill");
		String window = attributes.text("window");
		String algorithm = attributes.text("algorithm");
		String maxWait = attributes.text("maxWait");
		boolean inline = !(capacity.isEmpty() && refill.isEmpty() && window.isEmpty() && algorithm.isEmpty());
		String key = attributes.text("key");
		LiveLimit<RateLimitPolicy> live = inline ? new LiveLimit<>(LimitDefinition.of(attributes.valid(
				() -> inlineRateLimit(attributes.inlineName(name, ""), algorithm, capacity, refill, window, attributes)
					.build())))
				: named(this.limits.rateLimits(), name, attributes, "capacity and refill");
		UnaryOperator<RateLimitPolicy> local = (configured) -> {
			RateLimitPolicy.Builder builder = overridden(configured.toBuilder(configured.name()), key, attributes);
			return (maxWait.isEmpty() ? builder : builder.maxWaitMicros(Durations.parseMicros("maxWait", maxWait)))
				.build();
		};
		RateLimitPolicy policy = attributes.applied(live, local, null).limit();
		String cost = attributes.text("cost");
		Long fixedCost = parseFixedCost(cost);
		if (fixedCost != null) {
			// Every plan and listed key too: a cost one of them can never allow would refuse its callers.
			for (RateLimitPolicy variant : live.current().withLimit(local).variants()) {
				if (fixedCost < 0 || fixedCost > variant.capacity()) {
					throw attributes.error("cost " + fixedCost + " is outside 0.." + variant.capacity()
							+ " (the capacity of policy '" + policy.name() + "'"
							+ ((variant.capacity() != policy.capacity()) ? " for one of its plans or listed keys" : "")
							+ "), so it could never be allowed",
							"Use a cost between 0 and the smallest capacity of the policy, its plans and its listed "
									+ "keys.",
							null);
				}
			}
		}
		OutcomeRule countWhen = countWhen(policy, attributes);
		AppliedLimit<RateLimitPolicy> applied = attributes.applied(live,
				(countWhen != null) ? BoundPolicy.countedByOutcome(local) : local, null, fitting(fixedCost));
		Expression costExpression = (fixedCost != null) ? null : attributes.parse(cost, "cost");
		return new BoundPolicy(applied, costExpression, (fixedCost != null) ? fixedCost : 0, countWhen);
	}

	/**
	 * Parses {@code countWhen}, refusing a policy that cannot give units back
	 * exactly.
	 */
	private @Nullable OutcomeRule countWhen(RateLimitPolicy policy, Attributes attributes) {
		String countWhen = attributes.text("countWhen");
		if (countWhen.isEmpty()) {
			return null;
		}
		String problem = policy.outcomeCountingProblem();
		if (problem != null) {
			throw attributes.error("countWhen counts calls by outcome, which policy '" + policy.name()
					+ "' cannot: " + problem, "Change the policy, or remove countWhen to count every call.", null);
		}
		return OutcomeRule.expression(attributes.parse(countWhen, "countWhen",
				"Correct the SpEL expression; it sees #result, #exception and the arguments, e.g. "
						+ "\"#exception != null\" or \"!#result.ok\"."));
	}

	/**
	 * Refuses, at a method with a fixed cost, a changed definition (a refresh, an
	 * override) in which a plan or listed key could never allow that cost: the
	 * method keeps deciding with the definition it had.
	 */
	private static Consumer<LimitDefinition<RateLimitPolicy>> fitting(@Nullable Long fixedCost) {
		return (definition) -> {
			if (fixedCost == null) {
				return;
			}
			for (RateLimitPolicy variant : definition.variants()) {
				if (fixedCost > variant.capacity()) {
					throw new PolicyValidationException("cost", fixedCost, "exceeds the capacity "
							+ variant.capacity() + " of policy '" + variant.name() + "' or one of its plans or keys");
				}
			}
		};
	}

	/**
	 * Applies what an annotation may override on a named or inline limit of any
	 * kind: whose limit a call counts against, and whether it is told.
	 * @param key the key attribute, empty to keep the limit's own
	 * @param attributes the annotation, whose visibility attribute, when not empty, replaces the limit's own
	 */
	private static <B extends AbstractLimit.AbstractBuilder<B, ?>> B overridden(B builder, String key,
			Attributes attributes) {
		if (!key.isEmpty()) {
			builder.key(key);
		}
		String visibility = attributes.text("visibility");
		return visibility.isEmpty() ? builder : builder.visibility(Visibility.parse(visibility));
	}

	private RateLimitPolicy.Builder inlineRateLimit(String name, String algorithm, String capacity, String refill,
			String window, Attributes attributes) {
		RateLimitPolicy.Builder builder = RateLimitPolicy.builder(name);
		if (!algorithm.isEmpty()) {
			builder.algorithm(parseAlgorithm(algorithm));
		}
		builder.capacity(parseWhole("capacity", capacity, "must be a positive whole number"));
		if (!refill.isEmpty()) {
			builder.refill(refill);
		}
		if (!window.isEmpty()) {
			builder.window(window);
		}
		return builder;
	}

	private BoundBudget bind(CostBudget annotation, Attributes attributes) {
		String name = attributes.text("policy");
		String key = attributes.text("key");
		String estimate = attributes.text("estimate");
		String actual = attributes.text("actual");
		LiveLimit<BudgetPolicy> live = named(this.limits.budgets(), name, attributes, null);
		// The key attribute names whose budget it is per call; the budget's own key stays the configured one.
		String onOverrun = attributes.text("onOverrun");
		UnaryOperator<BudgetPolicy> local = (attributes.text("visibility").isEmpty() && onOverrun.isEmpty())
				? UnaryOperator.identity() : (configured) -> {
					BudgetPolicy.Builder builder = overridden(configured.toBuilder(), "", attributes);
					return (onOverrun.isEmpty() ? builder : builder.onOverrun(parseOnOverrun(onOverrun))).build();
				};
		AppliedLimit<BudgetPolicy> budget = attributes.applied(live, local, key.isEmpty() ? null : key);
		if (estimate.isEmpty()) {
			throw attributes.error("(\"" + name + "\") has no estimate",
					"Give the amount to reserve before the call, e.g. estimate = \"#request.maxTokens * 0.000002\".",
					null);
		}
		return new BoundBudget(budget, attributes.parse(estimate, "estimate"),
				actual.isEmpty() ? null : attributes.parse(actual, "actual"));
	}

	private BoundCap bind(Concurrency annotation, Attributes attributes) {
		String name = attributes.text("policy");
		String permits = attributes.text("permits");
		String scope = attributes.text("scope");
		String maxWait = attributes.text("maxWait");
		String key = attributes.text("key");
		LiveLimit<ConcurrencyPolicy> live = permits.isEmpty()
				? named(this.limits.concurrency(), name, attributes, "permits")
				: new LiveLimit<>(LimitDefinition.of(attributes
					.valid(() -> inlineCap(attributes.inlineName(name, ".concurrency"), permits, scope).build())));
		UnaryOperator<ConcurrencyPolicy> local = (configured) -> {
			ConcurrencyPolicy.Builder builder = overridden(configured.toBuilder(), key, attributes);
			return (maxWait.isEmpty() ? builder
					: builder.maxWait(Duration.ofNanos(Durations.parseMicros("maxWait", maxWait) * 1_000L)))
				.build();
		};
		AppliedLimit<ConcurrencyPolicy> applied = attributes.applied(live, local, null);
		ConcurrencyPolicy policy = applied.limit();
		if (policy.scope() == ConcurrencyPolicy.Scope.DISTRIBUTED && !this.distributedAvailable) {
			throw attributes.error("policy '" + policy.name() + "' is distributed but the rate limiter has no Redis "
					+ "backend", "Set rate-limit.backend=redis, or use scope local.", null);
		}
		return new BoundCap(applied);
	}

	private static ConcurrencyPolicy.Builder inlineCap(String name, String permits, String scope) {
		ConcurrencyPolicy.Builder builder = ConcurrencyPolicy.builder(name);
		builder.permits((int) parseWhole("permits", permits, "must be a positive whole number"));
		if (!scope.isEmpty()) {
			try {
				builder.scope(ConcurrencyPolicy.Scope.valueOf(scope.toUpperCase(Locale.ROOT)));
			}
			catch (IllegalArgumentException ex) {
				throw new PolicyValidationException("scope", scope, "use local or distributed");
			}
		}
		return builder;
	}

	/**
	 * Looks up a configured limit of one kind, failing with the method and what to
	 * configure.
	 * @param inlineAttributes the attributes that define the limit inline instead,
	 * or {@code null} when the kind has no inline form
	 */
	private <L extends Limit> LiveLimit<L> named(NamedLimits<L> configured, String name, Attributes attributes,
			@Nullable String inlineAttributes) {
		LimitKind kind = attributes.kind();
		if (name.isEmpty()) {
			throw attributes.error("has no " + kind.label() + " name"
					+ ((inlineAttributes != null) ? " and no inline " + inlineAttributes : ""),
					"Name a " + kind.label() + " configured under " + kind.property("<name>")
							+ ((inlineAttributes != null) ? ", or define one inline with " + inlineAttributes : "")
							+ ".",
					null);
		}
		Optional<LiveLimit<L>> limit = configured.live(name);
		if (limit.isEmpty()) {
			throw attributes.error("(\"" + name + "\"), but no " + kind.label() + " named '" + name
					+ "' is configured (configured: " + configured.names() + ")",
					"Add " + kind.property(name) + " to the configuration or correct the name"
							+ ((inlineAttributes != null) ? ", or define it inline with " + inlineAttributes : "")
							+ ".",
					null);
		}
		return limit.get();
	}

	private static Algorithm parseAlgorithm(String text) {
		String constant = text.replace('-', '_').toUpperCase(Locale.ROOT);
		for (Algorithm candidate : Algorithm.values()) {
			if (candidate.name().equals(constant)) {
				return candidate;
			}
		}
		throw new PolicyValidationException("algorithm", text, "use one of token-bucket, fixed-window, "
				+ "sliding-window-log, sliding-window-counter, leaky-bucket, leaky-bucket-shaping");
	}

	private static OnOverrun parseOnOverrun(String text) {
		try {
			return OnOverrun.valueOf(text.toUpperCase(Locale.ROOT));
		}
		catch (IllegalArgumentException ex) {
			throw new PolicyValidationException("onOverrun", text, "use stop or extend");
		}
	}

	private static long parseWhole(String attribute, String text, String reason) {
		try {
			return Long.parseLong(text);
		}
		catch (NumberFormatException ex) {
			throw new PolicyValidationException(attribute, text, reason);
		}
	}

	private static @Nullable Long parseFixedCost(String cost) {
		try {
			return Long.valueOf(cost.strip());
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

	/**
	 * Describes a method for messages.
	 * @param method the method
	 * @return {@code Method com.example.Type.name()}
	 */
	static String describe(Method method) {
		return "Method " + method.getDeclaringClass().getName() + "." + method.getName() + "()";
	}

	/**
	 * The attributes of one annotation on one method: placeholders, parsing,
	 * validation and the wording of their errors, the same for every kind.
	 */
	private final class Attributes {

		private final Method method;

		private final String annotation;

		/** The annotation's attributes by name, aliases resolved. */
		private final Map<String, Object> values;

		Attributes(Method method, Annotation annotation) {
			this.method = method;
			this.annotation = "@" + annotation.annotationType().getSimpleName();
			this.values = AnnotationUtils.getAnnotationAttributes(annotation);
		}

		LimitKind kind() {
			return switch (this.annotation) {
				case "@CostBudget" -> LimitKind.BUDGET;
				case "@Concurrency" -> LimitKind.CONCURRENCY;
				default -> LimitKind.RATE_LIMIT;
			};
		}

		/**
		 * Returns an attribute's text with placeholders resolved, stripped.
		 */
		String text(String attribute) {
			String value = (String) this.values.get(attribute);
			try {
				return LimitAnnotations.this.placeholders.apply(value).strip();
			}
			catch (IllegalArgumentException ex) {
				throw error(attribute + " '" + value + "' has an unresolvable placeholder",
						"Define the property it refers to or give the placeholder a default, e.g. ${name:10}.", ex);
			}
		}

		Expression parse(String text, String attribute) {
			return parse(text, attribute, "Correct the SpEL expression, e.g. header('X-User-Id'), ip, principal, "
					+ "global or #argumentName.");
		}

		Expression parse(String text, String attribute, String action) {
			try {
				return LimitAnnotations.this.expressions.parse(text);
			}
			catch (ParseException ex) {
				throw error(attribute + " expression '" + text + "' cannot be parsed: " + ex.getMessage(), action,
						ex);
			}
		}

		/**
		 * Returns the name of an inline limit: the one given, or the method's own
		 * (with a suffix, so that two kinds on one method never share a name); a
		 * name that a configured limit of any kind already has is refused.
		 */
		String inlineName(String name, String suffix) {
			String inline = name.isEmpty()
					? this.method.getDeclaringClass().getSimpleName() + "." + this.method.getName() + suffix : name;
			if (LimitAnnotations.this.limits.find(inline).isPresent()) {
				throw error("defines an inline " + kind().label() + " named '" + inline + "', a name the "
						+ LimitAnnotations.this.limits.find(inline).get().kind().label() + " "
						+ LimitAnnotations.this.limits.find(inline).get().kind().property(inline) + " already has",
						"Remove the inline attributes to use the configured limit, or give the inline one another "
								+ "name.",
						null);
			}
			return inline;
		}

		/**
		 * Applies a live limit at this method, checking what the method changes
		 * and parsing the expressions of the limit as it stands.
		 */
		<L extends Limit> AppliedLimit<L> applied(LiveLimit<L> live, UnaryOperator<L> local,
				@Nullable String keyOverride) {
			return applied(live, local, keyOverride, (definition) -> {
			});
		}

		<L extends Limit> AppliedLimit<L> applied(LiveLimit<L> live, UnaryOperator<L> local,
				@Nullable String keyOverride, Consumer<LimitDefinition<L>> check) {
			L here = valid(() -> local.apply(live.current().limit()));
			// Parsed first here to word a bad expression's error for this method.
			parse((keyOverride != null) ? keyOverride : here.key(), "key");
			return valid(
					() -> new AppliedLimit<>(live, local, keyOverride, LimitAnnotations.this.expressions, check));
		}

		<T> T valid(java.util.function.Supplier<T> build) {
			try {
				return build.get();
			}
			catch (PolicyValidationException ex) {
				throw error(ex.getAttribute() + " '" + ex.getValue() + "' is invalid: " + ex.getReason(),
						"Correct the annotation attribute '" + ex.getAttribute() + "'.", ex);
			}
		}

		/**
		 * Resolves the fallback this annotation names, on the bean's class.
		 */
		FallbackMethod fallback(Class<?> beanClass) {
			return FallbackMethod.resolve(this.method, beanClass, text("fallback"),
					(problem, action) -> error(problem, action, null));
		}

		RateLimitConfigurationException error(String problem, String action, @Nullable Throwable cause) {
			return new RateLimitConfigurationException(describe(this.method) + " is annotated " + this.annotation
					+ ": " + problem, action, cause);
		}

	}

}
