package dev.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.PropertySourcesPlaceholdersResolver;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.core.env.ConfigurableEnvironment;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitDefinition;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.LiveLimit;
import dev.ratelimit.core.NamedLimits;
import dev.ratelimit.core.Quota;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.key.KeyExpressions;
import dev.ratelimit.live.LimitOverrides;
import dev.ratelimit.plans.ChangeReach;
import dev.ratelimit.plans.RecentCallers;

/**
 * Rebuilds the configured limits from the environment when the configuration
 * is refreshed, and applies them to the {@link LiveLimit live limits}: the
 * next decision uses the new numbers, plans, key overrides and exemptions.
 * <p>
 * All or nothing: the {@code rate-limit.*} properties are bound and checked as
 * at start-up, and one invalid value refuses the whole refresh (logged with
 * the property and its value), so that limits never run with half of a
 * change. What a running application cannot change is logged as needing a
 * restart and left as it is: limits added or removed, a limit that changed
 * kind, and every other {@code rate-limit.*} property (routes, backend, Redis
 * settings, headers).
 * <p>
 * Each rebuilt limit is logged with whom the change reaches (the plans whose
 * callers are decided by other numbers, with their recent callers on this
 * instance when they are counted); a change of a limit's own numbers that
 * reaches no caller, since every caller is decided by a plan that sets those
 * numbers itself, is logged at {@code WARN} with the properties to change instead.
 */
final class LimitRefresher implements AopInfrastructureBean {

	private static final Log logger = LogFactory.getLog(LimitRefresher.class);

	private static final List<String> LIVE_GROUPS = List.of("rate-limit.policies.", "rate-limit.budgets.",
			"rate-limit.concurrency.");

	private final ConfigurableEnvironment environment;

	private final LimitRegistry registry;

	private final KeyExpressions expressions;

	private final LimitOverrides overrides;

	private final boolean distributedCaps;

	private final Supplier<RecentCallers> recentCallers;

	/**
	 * One refresh at a time. A lock, not a monitor: a refresh reads the
	 * overrides' store (a Redis round trip when it is shared) on the thread that
	 * published the change, an endpoint's request thread, virtual with
	 * {@code spring.threads.virtual.enabled}; a virtual thread that parks inside a
	 * monitor pins its carrier on JDK 21 to 23.
	 */
	private final ReentrantLock lock = new ReentrantLock();

	LimitRefresher(ConfigurableEnvironment environment, LimitRegistry registry, KeyExpressions expressions,
			LimitOverrides overrides, boolean distributedCaps, Supplier<RecentCallers> recentCallers) {
		this.environment = environment;
		this.registry = registry;
		this.expressions = expressions;
		this.overrides = overrides;
		this.distributedCaps = distributedCaps;
		this.recentCallers = recentCallers;
	}

	/**
	 * Rebuilds the limits from the environment as it is now.
	 * @param changedKeys the properties that changed, as the refresh names them
	 * @return whether the limits were rebuilt; {@code false} when a value was refused
	 */
	boolean refresh(Set<String> changedKeys) {
		this.lock.lock();
		try {
			warnRestartOnly(changedKeys);
			RateLimitProperties properties;
			List<LimitDefinition<RateLimitPolicy>> policies;
			List<LimitDefinition<BudgetPolicy>> budgets;
			List<LimitDefinition<ConcurrencyPolicy>> caps;
			try {
				properties = bind();
				RateLimitPropertiesValidator.validate(properties);
				policies = LimitPropertiesBinder.POLICIES.bindAll(properties.getPolicies(), this.expressions);
				budgets = LimitPropertiesBinder.BUDGETS.bindAll(properties.getBudgets(), this.expressions);
				caps = ConcurrencyPropertiesBinder.checkDistributed(
						LimitPropertiesBinder.CONCURRENCY.bindAll(properties.getConcurrency(), this.expressions),
						this.distributedCaps);
			}
			catch (RuntimeException ex) {
				logger.warn("Refused the refreshed rate-limit configuration, every limit keeps its numbers: "
						+ describe(ex));
				return false;
			}
			Set<String> configured = new LinkedHashSet<>();
			reconfigure(this.registry.rateLimits(), policies, configured);
			reconfigure(this.registry.budgets(), budgets, configured);
			reconfigure(this.registry.concurrency(), caps, configured);
			for (Limit limit : this.registry.all()) {
				if (!configured.contains(limit.name())) {
					logger.warn("The refreshed configuration no longer has " + limit.kind().property(limit.name())
							+ "; removing a limit needs a restart, it keeps applying until then");
				}
			}
			// An override the old definition refused (a plan added since) may fit the new one.
			this.overrides.reapply();
			return true;
		}
		finally {
			this.lock.unlock();
		}
	}

	private RateLimitProperties bind() {
		ApplicationConversionService conversion = new ApplicationConversionService();
		// The converters RateLimitAutoConfiguration registers for binding at start-up.
		conversion.addConverter(new StringToRefillConverter());
		conversion.addConverter(new StringToBudgetWindowConverter());
		conversion.addConverter(new StringToAmountConverter());
		conversion.addConverter(new NumberToAmountConverter());
		Binder binder = new Binder(ConfigurationPropertySources.get(this.environment),
				new PropertySourcesPlaceholdersResolver(this.environment), conversion);
		return binder.bind("rate-limit", Bindable.of(RateLimitProperties.class)).orElseGet(RateLimitProperties::new);
	}

	private <L extends Limit> void reconfigure(NamedLimits<L> limits, List<LimitDefinition<L>> definitions,
			Set<String> configured) {
		for (LimitDefinition<L> definition : definitions) {
			String name = definition.limit().name();
			configured.add(name);
			Optional<LiveLimit<L>> live = limits.live(name);
			if (live.isEmpty()) {
				Optional<Limit> other = this.registry.find(name);
				logger.warn("The refreshed configuration " + (other.isPresent() ? "turns "
						+ other.get().kind().property(name) + " into " : "adds ")
						+ definition.limit().kind().property(name) + "; that needs a restart, the limits stay as "
						+ "they were started until then");
				continue;
			}
			LimitDefinition<L> before = live.get().configured();
			if (same(before, definition)) {
				continue;
			}
			LimitDefinition<L> inForce = live.get().current();
			Map<String, Quota> dropped = live.get().reconfigure(definition);
			ChangeReach reach = ChangeReach.between(inForce, live.get().current());
			logger.info("Refreshed " + definition.limit().kind().property(name) + ": " + summary(before) + " -> "
					+ summary(definition) + "; " + reaches(reach, definition.limit().kind(), name));
			warnUnreached(before, definition, reach);
			dropped.forEach((target, quota) -> logger.warn("The override " + quota + " of "
					+ definition.limit().kind().property(name) + (target.isEmpty() ? "" : " plan '" + target + "'")
					+ " no longer fits it and is no longer applied"));
		}
	}

	private String reaches(ChangeReach reach, LimitKind kind, String name) {
		if (reach.isEmpty()) {
			return "changes no caller's numbers";
		}
		RecentCallers callers = this.recentCallers.get();
		Map<String, Long> recent = (callers != null) ? callers.counted(kind, name).byPlan() : Map.of();
		List<String> parts = new ArrayList<>();
		for (String plan : reach.plans()) {
			String who = plan.isEmpty() ? "every caller" : "plan '" + plan + "'";
			parts.add((callers != null) ? who + " (" + recent.getOrDefault(plan, 0L) + " recent callers)" : who);
		}
		if (!reach.keys().isEmpty()) {
			parts.add("the listed keys " + reach.keys());
		}
		return "changes the numbers of " + String.join(", ", parts);
	}

	/**
	 * Warns of new numbers of the limit itself that no caller is decided by: on a
	 * limit with plans every caller is decided by a plan, and a plan that sets a
	 * number itself does not take the limit's.
	 */
	private static void warnUnreached(LimitDefinition<?> before, LimitDefinition<?> after, ChangeReach reach) {
		String name = after.limit().name();
		boolean ownNumbersChanged = !LimitOverrides.numbers(before.limit()).equals(LimitOverrides.numbers(after.limit()));
		if (after.planExpression() == null || !ownNumbersChanged || !reach.plans().isEmpty()) {
			return;
		}
		String property = after.limit().kind().property(name);
		logger.warn("The refreshed numbers of " + property + " " + LimitOverrides.numbers(after.limit())
				+ " change no caller's limit: every caller is decided by one of its plans "
				+ after.planQuotas().keySet() + " (without a plan by the default plan '" + after.defaultPlan()
				+ "'), and each sets these numbers itself; set " + property + ".plans.<plan>.* instead");
	}

	private static boolean same(LimitDefinition<?> a, LimitDefinition<?> b) {
		return a.limit().equals(b.limit()) && equal(a.planExpression(), b.planExpression())
				&& equal(a.defaultPlan(), b.defaultPlan()) && a.planQuotas().equals(b.planQuotas())
				&& a.keyQuotas().equals(b.keyQuotas()) && a.exemption().equals(b.exemption());
	}

	private static boolean equal(@Nullable Object a, @Nullable Object b) {
		return (a == null) ? b == null : a.equals(b);
	}

	private static String summary(LimitDefinition<?> definition) {
		StringBuilder summary = new StringBuilder(LimitOverrides.numbers(definition.limit()).toString());
		if (!definition.planQuotas().isEmpty()) {
			summary.append(" plans ").append(definition.planQuotas());
		}
		if (!definition.keyQuotas().isEmpty()) {
			summary.append(" key overrides ").append(definition.keyQuotas());
		}
		return summary.toString();
	}

	private void warnRestartOnly(Set<String> changedKeys) {
		List<String> restartOnly = new ArrayList<>();
		for (String key : changedKeys) {
			String name = key.toLowerCase(Locale.ROOT).replace('_', '-');
			boolean ours = name.startsWith("rate-limit.") || name.startsWith("rate-limit-");
			boolean live = LIVE_GROUPS.stream().anyMatch(name::startsWith)
					|| LIVE_GROUPS.stream().map((group) -> group.replace('.', '-')).anyMatch(name::startsWith);
			if (ours && !live) {
				restartOnly.add(key);
			}
		}
		if (!restartOnly.isEmpty()) {
			logger.warn("Changed properties " + restartOnly + " apply at the next restart: a refresh applies only "
					+ "rate-limit.policies, rate-limit.budgets and rate-limit.concurrency (routes, backend, Redis "
					+ "and header settings are read at start-up)");
		}
	}

	private static String describe(Throwable ex) {
		Throwable cause = ex;
		// A binding failure says which property; its cause says what is wrong with the value.
		StringBuilder text = new StringBuilder(String.valueOf(ex.getMessage()));
		while (cause.getCause() != null && cause.getCause() != cause) {
			cause = cause.getCause();
			if (cause.getMessage() != null && !text.toString().contains(cause.getMessage())) {
				text.append(": ").append(cause.getMessage());
			}
		}
		return text.toString();
	}

}
