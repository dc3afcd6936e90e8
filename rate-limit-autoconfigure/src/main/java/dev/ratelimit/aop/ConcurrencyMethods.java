package dev.ratelimit.aop;

import java.lang.reflect.Method;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;

import org.springframework.aop.support.AopUtils;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;

import dev.ratelimit.Concurrency;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.Durations;
import dev.ratelimit.core.PolicyValidationException;
import dev.ratelimit.core.RateLimitConfigurationException;
import dev.ratelimit.core.Visibility;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.core.NamedLimits;

/**
 * Resolves the {@link Concurrency} annotation of a method into a policy with a
 * parsed key expression, once per method. Every error names the method.
 */
public final class ConcurrencyMethods {

	private final NamedLimits<ConcurrencyPolicy> policies;

	private final KeyExpressions expressions;

	private final UnaryOperator<String> placeholders;

	private final boolean distributedAvailable;

	private final Map<MethodClassKey, CappedMethod> cache = new ConcurrentHashMap<>();

	/**
	 * Creates a resolver.
	 * @param policies the configured policies
	 * @param expressions the expression parser
	 * @param placeholders resolves {@code ${...}} in attribute values
	 * @param distributedAvailable whether distributed policies can be served (Redis backend)
	 */
	public ConcurrencyMethods(NamedLimits<ConcurrencyPolicy> policies, KeyExpressions expressions,
			UnaryOperator<String> placeholders, boolean distributedAvailable) {
		this.policies = policies;
		this.expressions = expressions;
		this.placeholders = placeholders;
		this.distributedAvailable = distributedAvailable;
	}

	/**
	 * Returns the resolved cap of a method.
	 * @param method the invoked method
	 * @param targetClass the class of the target bean
	 * @return the method with its cap
	 */
	public CappedMethod resolve(Method method, Class<?> targetClass) {
		MethodClassKey cacheKey = new MethodClassKey(method, targetClass);
		CappedMethod capped = this.cache.get(cacheKey);
		if (capped == null) {
			capped = this.cache.computeIfAbsent(cacheKey, (k) -> doResolve(method, targetClass));
		}
		return capped;
	}

	private CappedMethod doResolve(Method method, Class<?> targetClass) {
		Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
		Concurrency annotation = AnnotatedElementUtils.findMergedAnnotation(specific, Concurrency.class);
		String where = RateLimitedMethods.describe(specific);
		String name = resolve(annotation.policy(), "policy", where);
		String permits = resolve(annotation.permits(), "permits", where);
		String key = resolve(annotation.key(), "key", where);
		String maxWait = resolve(annotation.maxWait(), "maxWait", where);
		String scope = resolve(annotation.scope(), "scope", where);
		String visibility = resolve(annotation.visibility(), "visibility", where);
		ConcurrencyPolicy policy;
		try {
			policy = permits.isEmpty() ? named(name, where)
					: inline(name.isEmpty() ? specific.getDeclaringClass().getSimpleName() + "." + specific.getName()
							: name, permits, scope, where);
			if (!key.isEmpty() || !maxWait.isEmpty() || !visibility.isEmpty()) {
				policy = override(policy, key, maxWait, visibility);
			}
		}
		catch (PolicyValidationException ex) {
			throw new RateLimitConfigurationException(where + ": @Concurrency " + ex.getAttribute() + " '"
					+ ex.getValue() + "' is invalid: " + ex.getReason(),
					"Correct the annotation attribute '" + ex.getAttribute() + "'.", ex);
		}
		if (policy.scope() == ConcurrencyPolicy.Scope.DISTRIBUTED && !this.distributedAvailable) {
			throw new RateLimitConfigurationException(where + ": @Concurrency policy '" + policy.name()
					+ "' is distributed but the rate limiter has no Redis backend",
					"Set rate-limit.backend=redis, or use scope local.", null);
		}
		Expression keyExpression;
		try {
			keyExpression = this.expressions.parse(policy.key());
		}
		catch (ParseException ex) {
			throw new RateLimitConfigurationException(where + ": @Concurrency key expression '" + policy.key()
					+ "' cannot be parsed: " + ex.getMessage(), "Correct the SpEL expression.", ex);
		}
		return new CappedMethod(specific, policy, keyExpression);
	}

	private ConcurrencyPolicy named(String name, String where) {
		if (name.isEmpty()) {
			throw new RateLimitConfigurationException(
					where + " is annotated @Concurrency without a policy name or inline permits",
					"Name a policy configured under rate-limit.concurrency or give permits, e.g. "
							+ "@Concurrency(permits = \"4\", maxWait = \"2s\").",
					null);
		}
		return this.policies.find(name)
			.orElseThrow(() -> new RateLimitConfigurationException(
					where + " is annotated @Concurrency(\"" + name + "\") but no concurrency policy named '" + name
							+ "' is configured (configured: " + this.policies.names() + ")",
					"Add rate-limit.concurrency." + name + " to the configuration, correct the name, "
							+ "or define the policy inline with permits.",
					null));
	}

	private ConcurrencyPolicy inline(String name, String permits, String scope, String where) {
		if (this.policies.find(name).isPresent()) {
			throw new RateLimitConfigurationException(where + " defines an inline concurrency policy named '" + name
					+ "' that is also configured under rate-limit.concurrency",
					"Remove permits from the annotation to use the configured policy, or rename the inline one.",
					null);
		}
		ConcurrencyPolicy.Builder builder = ConcurrencyPolicy.builder(name);
		try {
			builder.permits(Integer.parseInt(permits));
		}
		catch (NumberFormatException ex) {
			throw new PolicyValidationException("permits", permits, "must be a positive whole number");
		}
		if (!scope.isEmpty()) {
			try {
				builder.scope(ConcurrencyPolicy.Scope.valueOf(scope.toUpperCase(Locale.ROOT)));
			}
			catch (IllegalArgumentException ex) {
				throw new PolicyValidationException("scope", scope, "use local or distributed");
			}
		}
		return builder.build();
	}

	private static ConcurrencyPolicy override(ConcurrencyPolicy policy, String key, String maxWait,
			String visibility) {
		ConcurrencyPolicy.Builder builder = ConcurrencyPolicy.builder(policy.name())
			.permits(policy.permits())
			.key(key.isEmpty() ? policy.key() : key)
			.scope(policy.scope())
			.lease(java.time.Duration.ofNanos(policy.leaseMicros() * 1_000L))
			.rejection(policy.rejection())
			.failureMode(policy.failureMode())
			.visibility(policy.visibility())
			.maxWait(java.time.Duration.ofNanos(policy.maxWaitMicros() * 1_000L));
		if (!maxWait.isEmpty()) {
			builder.maxWait(java.time.Duration.ofNanos(Durations.parseMicros("max-wait", maxWait) * 1_000L));
		}
		if (!visibility.isEmpty()) {
			builder.visibility(Visibility.parse(visibility));
		}
		return builder.build();
	}

	private String resolve(String value, String attribute, String where) {
		try {
			return this.placeholders.apply(value).strip();
		}
		catch (IllegalArgumentException ex) {
			throw new RateLimitConfigurationException(
					where + ": @Concurrency " + attribute + " '" + value + "' has an unresolvable placeholder",
					"Define the property it refers to or give the placeholder a default.", ex);
		}
	}

	/**
	 * The cap of one method.
	 *
	 * @param method the most specific method
	 * @param policy the policy in force
	 * @param key the parsed key expression
	 */
	public record CappedMethod(Method method, ConcurrencyPolicy policy, Expression key) {
	}

}
