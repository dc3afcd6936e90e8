package dev.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Set;
import java.util.Map;

import dev.ratelimit.autoconfigure.RateLimitProperties.Budget;
import dev.ratelimit.autoconfigure.RateLimitProperties.ConcurrencyCap;
import dev.ratelimit.autoconfigure.RateLimitProperties.LimitProperties;
import dev.ratelimit.autoconfigure.RateLimitProperties.Policy;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.AbstractLimit;
import dev.ratelimit.core.AbstractLimit.AbstractBuilder;
import dev.ratelimit.core.CidrRange;
import dev.ratelimit.core.Exemption;
import dev.ratelimit.core.LimitDefinition;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.PolicyValidationException;
import dev.ratelimit.core.Quota;
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
			new LimitPropertiesBinder<>("rate-limit.policies", LimitKind.RATE_LIMIT);

	/** Binds {@code rate-limit.budgets}. */
	static final LimitPropertiesBinder<Budget, BudgetPolicy.Builder, BudgetPolicy> BUDGETS =
			new LimitPropertiesBinder<>("rate-limit.budgets", LimitKind.BUDGET);

	/** Binds {@code rate-limit.concurrency}. */
	static final LimitPropertiesBinder<ConcurrencyCap, ConcurrencyPolicy.Builder, ConcurrencyPolicy> CONCURRENCY =
			new LimitPropertiesBinder<>("rate-limit.concurrency", LimitKind.CONCURRENCY);

	private final String group;

	private final LimitKind kind;

	private LimitPropertiesBinder(String group, LimitKind kind) {
		this.group = group;
		this.kind = kind;
	}

	/**
	 * The kind's builder. Tests of the kind rather than a builder and a binding
	 * step passed as method references, which would be six classes spun at
	 * every start for three kinds (and rather than a switch, one more class).
	 */
	@SuppressWarnings("unchecked")
	private B builder(String name) {
		if (this.kind == LimitKind.RATE_LIMIT) {
			return (B) RateLimitPolicy.builder(name);
		}
		if (this.kind == LimitKind.BUDGET) {
			return (B) BudgetPolicy.builder(name);
		}
		return (B) ConcurrencyPolicy.builder(name);
	}

	/** Sets the properties of the kind's own on its builder. */
	private void kindProperties(B builder, S source) {
		if (this.kind == LimitKind.RATE_LIMIT) {
			PolicyPropertiesBinder.bind((RateLimitPolicy.Builder) builder, (Policy) source);
		}
		else if (this.kind == LimitKind.BUDGET) {
			BudgetPropertiesBinder.bind((BudgetPolicy.Builder) builder, (Budget) source);
		}
		else {
			ConcurrencyPropertiesBinder.bind((ConcurrencyPolicy.Builder) builder, (ConcurrencyCap) source);
		}
	}

	/**
	 * Builds every limit of the kind, in configuration order.
	 * @param sources the kind's properties by name
	 * @param expressions the key expression parser
	 * @return the limits
	 * @throws dev.ratelimit.core.RateLimitConfigurationException naming the first invalid property
	 */
	List<LimitDefinition<L>> bindAll(Map<String, S> sources, KeyExpressions expressions) {
		List<LimitDefinition<L>> limits = new ArrayList<>(sources.size());
		for (Map.Entry<String, S> source : sources.entrySet()) {
			limits.add(bind(source.getKey(), source.getValue(), expressions));
		}
		return limits;
	}

	/**
	 * Builds one limit from its properties, with its plans, key overrides and
	 * exemption.
	 * @param name the limit's name
	 * @param source its properties
	 * @param expressions the key expression parser
	 * @return the limit's definition
	 * @throws dev.ratelimit.core.RateLimitConfigurationException naming the first invalid property
	 */
	LimitDefinition<L> bind(String name, S source, KeyExpressions expressions) {
		String prefix = this.group + "." + name + ".";
		if (!source.getPlans().isEmpty() && source.getPlan() != null
				&& !source.getPlans().containsKey(source.getDefaultPlan())) {
			// Before the limit is built: its numbers may be the default plan's.
			throw InvalidProperty.of(prefix + "default-plan", source.getDefaultPlan(),
					"must name one of the plans " + source.getPlans().keySet(), null);
		}
		if (source.getDefaultPlan() != null && source.getPlans().containsKey(source.getDefaultPlan())) {
			// A limit defined by its plans: the default plan's numbers are the limit's own.
			source.fillFrom(source.getPlans().get(source.getDefaultPlan()));
		}
		L limit;
		try {
			B started = builder(name)
				.key(source.getKey())
				.failureMode(source.getFailureMode())
				.visibility(source.getVisibility());
			kindProperties(started, source);
			limit = started.build();
		}
		catch (PolicyValidationException ex) {
			throw InvalidProperty.of(prefix, ex);
		}
		InvalidProperty.checkKey(expressions, prefix + "key", limit.key());
		LimitDefinition<L> definition;
		try {
			definition = new LimitDefinition<>(limit, source.getPlan(), source.getDefaultPlan(),
					quotas(source.getPlans()), quotas(source.getOverrides()), exemption(prefix, source.getExempt()));
		}
		catch (PolicyValidationException ex) {
			throw InvalidProperty.of(prefix, ex);
		}
		if (definition.planExpression() != null) {
			InvalidProperty.checkKey(expressions, prefix + "plan", definition.planExpression());
		}
		if (definition.exemption().when() != null) {
			InvalidProperty.checkKey(expressions, prefix + "exempt.when", definition.exemption().when());
		}
		return definition;
	}

	private static Map<String, Quota> quotas(Map<String, RateLimitProperties.QuotaProperties> sources) {
		Map<String, Quota> quotas = new LinkedHashMap<>();
		for (Map.Entry<String, RateLimitProperties.QuotaProperties> source : sources.entrySet()) {
			quotas.put(source.getKey(), source.getValue().toQuota());
		}
		return quotas;
	}

	private static Exemption exemption(String prefix, RateLimitProperties.Exempt source) {
		List<CidrRange> cidrs = new ArrayList<>();
		for (int i = 0; i < source.getCidrs().size(); i++) {
			String text = source.getCidrs().get(i);
			try {
				cidrs.add(CidrRange.parse(text));
			}
			catch (IllegalArgumentException ex) {
				throw InvalidProperty.of(prefix + "exempt.cidrs[" + i + "]", text,
						"not an address range; use CIDR notation such as 10.0.0.0/8 or 2001:db8::/32", ex);
			}
		}
		for (String role : source.getRoles()) {
			if (role == null || role.isBlank()) {
				throw InvalidProperty.of(prefix + "exempt.roles", source.getRoles(), "a role must not be blank", null);
			}
		}
		return new Exemption(cidrs, Set.copyOf(source.getRoles()), source.getWhen());
	}

}
