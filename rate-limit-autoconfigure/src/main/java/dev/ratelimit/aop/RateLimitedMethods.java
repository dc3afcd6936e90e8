package dev.ratelimit.aop;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;

import org.springframework.aop.support.AopUtils;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;

import dev.ratelimit.RateLimited;
import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Durations;
import dev.ratelimit.core.PolicyValidationException;
import dev.ratelimit.core.RateLimitConfigurationException;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Visibility;
import dev.ratelimit.key.BoundPolicy;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.core.NamedLimits;

/**
 * Resolves the {@link RateLimited} annotations of a method into policies with
 * parsed expressions, once per method, and caches the result. Every error
 * names the method, so it can be reported at start-up.
 */
public final class RateLimitedMethods {

	private static final List<BoundPolicy> NONE = List.of();

	private final NamedLimits<RateLimitPolicy> policies;

	private final KeyExpressions expressions;

	private final UnaryOperator<String> placeholders;

	private final Map<MethodClassKey, LimitedMethod> cache = new ConcurrentHashMap<>();

	/**
	 * Creates a resolver.
	 * @param policies the configured policies
	 * @param expressions the expression parser
	 * @param placeholders resolves {@code ${...}} in attribute values, failing on unresolvable ones
	 */
	public RateLimitedMethods(NamedLimits<RateLimitPolicy> policies, KeyExpressions expressions,
			UnaryOperator<String> placeholders) {
		this.policies = policies;
		this.expressions = expressions;
		this.placeholders = placeholders;
	}

	/**
	 * Returns whether a method carries {@link RateLimited}.
	 * @param method the method
	 * @return whether it is limited
	 */
	public static boolean isLimited(Method method) {
		return !AnnotatedElementUtils.findMergedRepeatableAnnotations(method, RateLimited.class).isEmpty();
	}

	/**
	 * Returns the resolved policies of a method.
	 * @param method the invoked method, possibly an interface method
	 * @param targetClass the class of the target bean
	 * @return the method with its policies
	 * @throws RateLimitConfigurationException if an annotation is invalid
	 */
	public LimitedMethod resolve(Method method, Class<?> targetClass) {
		MethodClassKey cacheKey = new MethodClassKey(method, targetClass);
		LimitedMethod limited = this.cache.get(cacheKey);
		if (limited == null) {
			limited = this.cache.computeIfAbsent(cacheKey, (k) -> doResolve(method, targetClass));
		}
		return limited;
	}

	private LimitedMethod doResolve(Method method, Class<?> targetClass) {
		Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
		Set<RateLimited> annotations = AnnotatedElementUtils.findMergedRepeatableAnnotations(specific,
				RateLimited.class);
		if (annotations.isEmpty()) {
			return new LimitedMethod(specific, NONE);
		}
		List<BoundPolicy> bound = new ArrayList<>(annotations.size());
		for (RateLimited annotation : annotations) {
			bound.add(bind(annotation, specific));
		}
		return new LimitedMethod(specific, List.copyOf(bound));
	}

	private BoundPolicy bind(RateLimited annotation, Method method) {
		String where = describe(method);
		String name = resolve(annotation.policy(), "policy", where);
		String capacity = resolve(annotation.capacity(), "capacity", where);
		String refill = resolve(annotation.refill(), "refill", where);
		String window = resolve(annotation.window(), "window", where);
		String algorithm = resolve(annotation.algorithm(), "algorithm", where);
		String key = resolve(annotation.key(), "key", where);
		String cost = resolve(annotation.cost(), "cost", where);
		String maxWait = resolve(annotation.maxWait(), "maxWait", where);
		String visibility = resolve(annotation.visibility(), "visibility", where);
		boolean inline = !(capacity.isEmpty() && refill.isEmpty() && window.isEmpty() && algorithm.isEmpty());
		RateLimitPolicy policy = !inline ? named(name, where)
				: inline(name.isEmpty() ? method.getDeclaringClass().getSimpleName() + "." + method.getName() : name,
						new InlineValues(algorithm, capacity, refill, window), where);
		if (!key.isEmpty() || !maxWait.isEmpty() || !visibility.isEmpty()) {
			policy = override(policy, key, maxWait, visibility, where);
		}
		Expression keyExpression = parse(policy.key(), "key", where);
		Long fixedCost = parseFixedCost(cost);
		Expression costExpression = (fixedCost != null) ? null : parse(cost, "cost", where);
		if (fixedCost != null && (fixedCost < 0 || fixedCost > policy.capacity())) {
			throw new RateLimitConfigurationException(
					where + ": @RateLimited cost " + fixedCost + " is outside 0.." + policy.capacity()
							+ " (the capacity of policy '" + policy.name() + "'), so it could never be allowed",
					"Use a cost between 0 and the policy's capacity.", null);
		}
		return new BoundPolicy(policy, keyExpression, costExpression, (fixedCost != null) ? fixedCost : 0);
	}

	private static RateLimitPolicy override(RateLimitPolicy policy, String key, String maxWait, String visibility,
			String where) {
		try {
			RateLimitPolicy.Builder builder = policy.toBuilder(policy.name());
			if (!key.isEmpty()) {
				builder.key(key);
			}
			if (!visibility.isEmpty()) {
				builder.visibility(Visibility.parse(visibility));
			}
			if (!maxWait.isEmpty()) {
				builder.maxWaitMicros(Durations.parseMicros("max-wait", maxWait));
			}
			return builder.build();
		}
		catch (PolicyValidationException ex) {
			throw new RateLimitConfigurationException(where + ": @RateLimited " + ex.getAttribute() + " '"
					+ ex.getValue() + "' is invalid: " + ex.getReason(),
					"Correct the annotation attribute '" + ex.getAttribute() + "'.", ex);
		}
	}

	private RateLimitPolicy named(String name, String where) {
		if (name.isEmpty()) {
			throw new RateLimitConfigurationException(where + " is annotated @RateLimited without a policy name or an inline capacity and refill",
					"Name a policy configured under rate-limit.policies, e.g. @RateLimited(\"api\"), "
							+ "or define one inline, e.g. @RateLimited(capacity = \"10\", refill = \"10/1s\").",
					null);
		}
		return this.policies.find(name)
			.orElseThrow(() -> new RateLimitConfigurationException(
					where + " is annotated @RateLimited(\"" + name + "\") but no policy named '" + name
							+ "' is configured (configured: " + this.policies.names() + ")",
					"Add rate-limit.policies." + name + " to the configuration, correct the name, "
							+ "or define the policy inline with capacity and refill.",
					null));
	}

	private RateLimitPolicy inline(String name, InlineValues values, String where) {
		if (!name.isEmpty() && this.policies.find(name).isPresent()) {
			throw new RateLimitConfigurationException(
					where + " defines an inline policy named '" + name
							+ "' that is also configured under rate-limit.policies",
					"Either remove capacity and refill from the annotation to use the configured policy, "
							+ "or give the inline policy another name.",
					null);
		}
		try {
			return values.toPolicy(name);
		}
		catch (PolicyValidationException ex) {
			throw new RateLimitConfigurationException(
					where + ": @RateLimited " + ex.getAttribute() + " '" + ex.getValue() + "' is invalid: "
							+ ex.getReason(),
					"Correct the annotation attribute '" + ex.getAttribute() + "'.", ex);
		}
	}

	private Expression parse(String text, String attribute, String where) {
		try {
			return this.expressions.parse(text);
		}
		catch (ParseException ex) {
			throw new RateLimitConfigurationException(
					where + ": @RateLimited " + attribute + " expression '" + text + "' cannot be parsed: "
							+ ex.getMessage(),
					"Correct the SpEL expression, e.g. header('X-User-Id'), ip, principal, global or #argumentName.",
					ex);
		}
	}

	private String resolve(String value, String attribute, String where) {
		try {
			return this.placeholders.apply(value).strip();
		}
		catch (IllegalArgumentException ex) {
			throw new RateLimitConfigurationException(
					where + ": @RateLimited " + attribute + " '" + value + "' has an unresolvable placeholder",
					"Define the property it refers to or give the placeholder a default, e.g. ${name:10}.", ex);
		}
	}

	private static Long parseFixedCost(String cost) {
		try {
			return Long.valueOf(cost.strip());
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

	/**
	 * The inline policy attributes of one annotation, placeholders resolved.
	 */
	private record InlineValues(String algorithm, String capacity, String refill, String window) {

		RateLimitPolicy toPolicy(String name) {
			RateLimitPolicy.Builder builder = RateLimitPolicy.builder(name);
			if (!this.algorithm.isEmpty()) {
				builder.algorithm(parseAlgorithm(this.algorithm));
			}
			try {
				builder.capacity(Long.parseLong(this.capacity));
			}
			catch (NumberFormatException ex) {
				throw new PolicyValidationException("capacity", this.capacity, "must be a positive whole number");
			}
			if (!this.refill.isEmpty()) {
				builder.refill(this.refill);
			}
			if (!this.window.isEmpty()) {
				builder.window(this.window);
			}
			return builder.build();
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

	}

	static String describe(Method method) {
		return "Method " + method.getDeclaringClass().getName() + "." + method.getName() + "()";
	}

}
