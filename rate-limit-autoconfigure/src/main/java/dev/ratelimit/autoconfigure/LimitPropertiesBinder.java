package dev.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Function;

import dev.ratelimit.autoconfigure.RateLimitProperties.Budget;
import dev.ratelimit.autoconfigure.RateLimitProperties.ConcurrencyCap;
import dev.ratelimit.autoconfigure.RateLimitProperties.LimitProperties;
import dev.ratelimit.autoconfigure.RateLimitProperties.Policy;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.AbstractLimit;
import dev.ratelimit.core.AbstractLimit.AbstractBuilder;
import dev.ratelimit.core.PolicyValidationException;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.key.KeyExpressions;

/**
 * Builds the limits of one kind from their properties, the same way for every
 * kind: the builder started with the name, the common properties (key, failure
 * mode, visibility) set, a value the builder refuses reported with its exact
 * property name, and the key expression parsed. What a kind adds is its group
 * of properties, its builder and the step that sets its own properties.
 *
 * @param <S> the kind's properties
 * @param <B> the kind's builder
 * @param <L> the kind of limit
 */
final class LimitPropertiesBinder<S extends LimitProperties, B extends AbstractBuilder<B, L>, L extends AbstractLimit> {

	/** Binds {@code rate-limit.policies}. */
	static final LimitPropertiesBinder<Policy, RateLimitPolicy.Builder, RateLimitPolicy> POLICIES =
			new LimitPropertiesBinder<>("rate-limit.policies", RateLimitPolicy::builder, PolicyPropertiesBinder::bind);

	/** Binds {@code rate-limit.budgets}. */
	static final LimitPropertiesBinder<Budget, BudgetPolicy.Builder, BudgetPolicy> BUDGETS =
			new LimitPropertiesBinder<>("rate-limit.budgets", BudgetPolicy::builder, BudgetPropertiesBinder::bind);

	/** Binds {@code rate-limit.concurrency}. */
	static final LimitPropertiesBinder<ConcurrencyCap, ConcurrencyPolicy.Builder, ConcurrencyPolicy> CONCURRENCY =
			new LimitPropertiesBinder<>("rate-limit.concurrency", ConcurrencyPolicy::builder,
					ConcurrencyPropertiesBinder::bind);

	private final String group;

	private final Function<String, B> builder;

	private final BiConsumer<B, S> kindProperties;

	private LimitPropertiesBinder(String group, Function<String, B> builder, BiConsumer<B, S> kindProperties) {
		this.group = group;
		this.builder = builder;
		this.kindProperties = kindProperties;
	}

	/**
	 * Builds every limit of the kind, in configuration order.
	 * @param sources the kind's properties by name
	 * @param expressions the key expression parser
	 * @return the limits
	 * @throws dev.ratelimit.core.RateLimitConfigurationException naming the first invalid property
	 */
	List<L> bindAll(Map<String, S> sources, KeyExpressions expressions) {
		List<L> limits = new ArrayList<>(sources.size());
		sources.forEach((name, source) -> limits.add(bind(name, source, expressions)));
		return limits;
	}

	/**
	 * Builds one limit from its properties.
	 * @param name the limit's name
	 * @param source its properties
	 * @param expressions the key expression parser
	 * @return the limit
	 * @throws dev.ratelimit.core.RateLimitConfigurationException naming the first invalid property
	 */
	L bind(String name, S source, KeyExpressions expressions) {
		String prefix = this.group + "." + name + ".";
		L limit;
		try {
			B started = this.builder.apply(name)
				.key(source.getKey())
				.failureMode(source.getFailureMode())
				.visibility(source.getVisibility());
			this.kindProperties.accept(started, source);
			limit = started.build();
		}
		catch (PolicyValidationException ex) {
			throw InvalidProperty.of(prefix, ex);
		}
		InvalidProperty.checkKey(expressions, prefix + "key", limit.key());
		return limit;
	}

}
