package dev.ratelimit.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;

import org.jspecify.annotations.Nullable;

/**
 * One limit as it is defined at a moment: the limit itself, its plans (tiers)
 * with the expression that names a caller's plan and the plan for callers
 * without a known one, its overrides for listed key values, and when it does
 * not apply. Immutable: a refresh of the configuration or a run-time override
 * replaces a definition as a whole (see {@link LiveLimit}).
 * <p>
 * Plans and key overrides are {@link Quota quotas}: they change the limit's
 * numbers, never its name, key, algorithm or failure mode. Every variant
 * therefore keeps the limit's name, and with it the caller's storage key: a
 * caller that changes plan is decided by the new plan's numbers against the
 * state it already has.
 *
 * @param <L> the kind of limit
 */
public final class LimitDefinition<L extends Limit> {

	private final L limit;

	private final @Nullable String planExpression;

	private final @Nullable String defaultPlan;

	private final Map<String, Quota> planQuotas;

	private final Map<String, Quota> keyQuotas;

	private final Exemption exemption;

	private final Map<String, L> plans;

	private final Map<String, L> keyOverrides;

	private final L defaultVariant;

	private final boolean plain;

	/**
	 * Creates a definition.
	 * @param limit the limit, as it applies to callers without a plan when it has none
	 * @param planExpression the expression that names a caller's plan, or {@code null} for no plans
	 * @param defaultPlan the plan of callers without one or with an unknown one; required with plans
	 * @param planQuotas each plan's numbers, in configuration order
	 * @param keyQuotas the numbers of listed key values, which win over any plan
	 * @param exemption when the limit does not apply
	 * @throws PolicyValidationException naming the plan or key value whose numbers the
	 * limit's kind refuses, or a default plan that is not a plan
	 */
	public LimitDefinition(L limit, @Nullable String planExpression, @Nullable String defaultPlan,
			Map<String, Quota> planQuotas, Map<String, Quota> keyQuotas, Exemption exemption) {
		this.limit = Objects.requireNonNull(limit, "limit");
		this.planExpression = (planExpression == null || planExpression.isBlank()) ? null : planExpression.strip();
		this.planQuotas = Collections.unmodifiableMap(new LinkedHashMap<>(planQuotas));
		this.keyQuotas = Collections.unmodifiableMap(new LinkedHashMap<>(keyQuotas));
		this.exemption = Objects.requireNonNull(exemption, "exemption");
		if (this.planExpression == null && !this.planQuotas.isEmpty()) {
			throw new PolicyValidationException("plan", null, "plans are defined but no plan expression names a "
					+ "caller's plan; set plan, for example @plans.of(#tenant) or header('X-Plan')");
		}
		if (this.planExpression != null && this.planQuotas.isEmpty()) {
			throw new PolicyValidationException("plans", "{}", "a plan expression is set but no plan is defined");
		}
		if (this.planExpression != null && (defaultPlan == null || !this.planQuotas.containsKey(defaultPlan))) {
			throw new PolicyValidationException("default-plan", defaultPlan,
					"must name one of the plans " + this.planQuotas.keySet());
		}
		this.defaultPlan = (this.planExpression != null) ? defaultPlan : null;
		this.plans = variants("plans", this.planQuotas, true);
		this.keyOverrides = variants("overrides", this.keyQuotas, false);
		this.defaultVariant = (this.defaultPlan != null)
				? Objects.requireNonNull(this.plans.get(this.defaultPlan), "the default plan is a plan") : limit;
		this.plain = this.planExpression == null && this.keyOverrides.isEmpty() && exemption.isNone();
	}

	/**
	 * Creates the definition of a limit without plans, overrides or exemptions.
	 * @param <L> the kind
	 * @param limit the limit
	 * @return the definition
	 */
	public static <L extends Limit> LimitDefinition<L> of(L limit) {
		return new LimitDefinition<>(limit, null, null, Map.of(), Map.of(), Exemption.NONE);
	}

	@SuppressWarnings("unchecked")
	private Map<String, L> variants(String property, Map<String, Quota> quotas, boolean plans) {
		Map<String, L> variants = new LinkedHashMap<>();
		quotas.forEach((name, quota) -> {
			try {
				// Safe: withQuota and withPlan return the kind of the limit they are called on.
				Limit variant = this.limit.withQuota(quota);
				// A plan's variant carries its plan's name, so that a decision says which plan made it.
				variants.put(name, (L) (plans ? variant.withPlan(name) : variant));
			}
			catch (PolicyValidationException ex) {
				throw new PolicyValidationException(property + "." + name + "." + ex.getAttribute(), ex.getValue(),
						ex.getReason());
			}
		});
		return Collections.unmodifiableMap(variants);
	}

	/** @return the limit itself: its name, key, failure mode and visibility hold for every variant */
	public L limit() {
		return this.limit;
	}

	/** @return the expression naming a caller's plan, or {@code null} without plans */
	public @Nullable String planExpression() {
		return this.planExpression;
	}

	/** @return the plan of callers without a known one, or {@code null} without plans */
	public @Nullable String defaultPlan() {
		return this.defaultPlan;
	}

	/** @return each plan's numbers, in configuration order */
	public Map<String, Quota> planQuotas() {
		return this.planQuotas;
	}

	/** @return the numbers of listed key values */
	public Map<String, Quota> keyQuotas() {
		return this.keyQuotas;
	}

	/** @return when the limit does not apply */
	public Exemption exemption() {
		return this.exemption;
	}

	/**
	 * Returns whether the definition is the limit alone: no plans, no key
	 * overrides, no exemption, so that a call needs no more than the limit.
	 * @return whether the definition is plain
	 */
	public boolean isPlain() {
		return this.plain;
	}

	/**
	 * Returns whether a plan is defined.
	 * @param plan the plan's name, may be {@code null}
	 * @return whether it is one of the plans
	 */
	public boolean hasPlan(@Nullable String plan) {
		return plan != null && this.plans.containsKey(plan);
	}

	/**
	 * Returns every variant a call may be decided by: the limit itself, each
	 * plan's and each listed key's.
	 * @return the variants
	 */
	public List<L> variants() {
		List<L> variants = new ArrayList<>(1 + this.plans.size() + this.keyOverrides.size());
		variants.add(this.limit);
		variants.addAll(this.plans.values());
		variants.addAll(this.keyOverrides.values());
		return variants;
	}

	/**
	 * Returns a listed key's own variant.
	 * @param key the caller's key value, or {@code null}
	 * @return the key's override, or {@code null} when the key is not listed
	 */
	public @Nullable L keyOverride(@Nullable String key) {
		return (key != null && !this.keyOverrides.isEmpty()) ? this.keyOverrides.get(key) : null;
	}

	/**
	 * Returns the limit that decides a call: the listed key's override, else the
	 * caller's plan, else the default plan (or the limit itself without plans).
	 * @param plan the caller's plan, or {@code null}
	 * @param key the caller's key value, or {@code null}
	 * @return the variant to decide with
	 */
	public L select(@Nullable String plan, @Nullable String key) {
		if (key != null && !this.keyOverrides.isEmpty()) {
			L override = this.keyOverrides.get(key);
			if (override != null) {
				return override;
			}
		}
		if (plan != null) {
			L planned = this.plans.get(plan);
			if (planned != null) {
				return planned;
			}
		}
		return this.defaultVariant;
	}

	/**
	 * Returns this definition with the same plans, overrides and exemption over
	 * another limit of the same name: a refresh, a run-time override, or what an
	 * annotation changes where it applies the limit (key, visibility, max-wait).
	 * @param change derives the new limit from this one's
	 * @return the definition
	 * @throws PolicyValidationException if a plan or override no longer fits the new limit
	 */
	public LimitDefinition<L> withLimit(UnaryOperator<L> change) {
		return new LimitDefinition<>(change.apply(this.limit), this.planExpression, this.defaultPlan,
				this.planQuotas, this.keyQuotas, this.exemption);
	}

	/**
	 * Returns this definition with run-time overrides laid over its numbers.
	 * @param overrides quotas by target: {@code ""} for the limit itself (and so for
	 * every key override's numbers it does not set), or a plan's name
	 * @return the definition
	 * @throws PolicyValidationException if a target is not a plan or a number is refused
	 */
	@SuppressWarnings("unchecked")
	public LimitDefinition<L> overriddenBy(Map<String, Quota> overrides) {
		if (overrides.isEmpty()) {
			return this;
		}
		Map<String, Quota> plans = new LinkedHashMap<>(this.planQuotas);
		Quota own = Quota.NONE;
		for (Map.Entry<String, Quota> override : overrides.entrySet()) {
			String target = override.getKey();
			if (target.isEmpty()) {
				own = override.getValue();
			}
			else if (plans.containsKey(target)) {
				plans.put(target, plans.get(target).overlaidWith(override.getValue()));
			}
			else {
				throw new PolicyValidationException("plan", target, this.limit.kind().label() + " '"
						+ this.limit.name() + "' has " + (plans.isEmpty() ? "no plans" : "the plans " + plans.keySet()));
			}
		}
		// Safe: withQuota returns the kind of the limit it is called on.
		L base = (L) this.limit.withQuota(own);
		return new LimitDefinition<>(base, this.planExpression, this.defaultPlan, plans, this.keyQuotas,
				this.exemption);
	}

}
