package dev.ratelimit.actuate;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.actuate.RateLimitEndpoint.AffectsDescriptor;
import dev.ratelimit.actuate.RateLimitEndpoint.RecentCallersDescriptor;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitDefinition;
import dev.ratelimit.core.Quota;
import dev.ratelimit.plans.ChangeReach;
import dev.ratelimit.plans.RecentCallers;

/**
 * Says whom an operator's change of a limit reaches, for the endpoint's
 * answers: the plans and listed keys whose numbers change, with the callers
 * each plan had recently (across the fleet when the instances share Redis). Refuses an override that reaches no
 * caller, or only plans no recent caller was on while others had callers,
 * unless the operator insists; the answer then carries the reason as a warning.
 */
final class ChangeReports {

	/** The label of the callers decided by the limit's own numbers on a limit with plans: its listed keys. */
	static final String LISTED_KEYS = "(listed keys)";

	private final @Nullable RecentCallers callers;

	/**
	 * Creates the reports.
	 * @param callers the recent callers per plan, or {@code null} when not counted
	 */
	ChangeReports(@Nullable RecentCallers callers) {
		this.callers = callers;
	}

	/**
	 * Returns a limit's recent callers (across the fleet when shared) by the plan that decided
	 * them: every plan (0 when none came), or {@value RateLimitEndpoint#OWN}
	 * without plans.
	 * @param definition the limit's definition in force
	 * @return the counts, or {@code null} when they are not counted
	 */
	@Nullable RecentCallersDescriptor recent(LimitDefinition<? extends Limit> definition) {
		if (this.callers == null) {
			return null;
		}
		RecentCallers.Counted counted = this.callers.counted(definition.limit().kind(), definition.limit().name());
		Map<String, Long> seen = counted.byPlan();
		Map<String, Long> counts = new LinkedHashMap<>();
		for (String target : ChangeReach.targets(definition)) {
			counts.put(label(target), seen.getOrDefault(target, 0L));
		}
		Long listed = seen.get(ChangeReach.OWN);
		if (definition.planExpression() != null && listed != null && listed > 0) {
			counts.put(LISTED_KEYS, listed);
		}
		return new RecentCallersDescriptor(this.callers.window().toString(), counted.counted(), counts);
	}

	/**
	 * Reports whom an override reaches, or refuses it.
	 * @param target {@code ""} for the limit's own numbers, else a plan
	 * @param quota the override's numbers
	 * @param before the definition in force
	 * @param after the definition the override makes
	 * @param force whether the operator insists on a change that reaches no caller
	 * @param warnings receives what the operator should know
	 * @return whom it reaches
	 * @throws ChangeRefusedException if it reaches no caller and {@code force} is not set
	 */
	AffectsDescriptor override(String target, Quota quota, LimitDefinition<? extends Limit> before,
			LimitDefinition<? extends Limit> after, boolean force, List<String> warnings) {
		ChangeReach reach = ChangeReach.between(before, after);
		RecentCallersDescriptor recent = recent(after);
		String subject = "The override " + quota + " of " + subject(after, target);
		String problem = problem(reach, target, after, recent);
		if (problem != null) {
			List<Map<String, Object>> instead = instead(target, quota, after, recent);
			if (!force) {
				String advice = (instead.isEmpty() ? "Send" : "Override a plan instead, for example "
						+ body(instead.get(0)) + ", or send") + " \"force\": true to apply it anyway";
				throw new ChangeRefusedException(subject + " " + problem + ". " + advice, recent, instead);
			}
			warnings.add(subject + " " + problem + "; applied because \"force\" was set");
		}
		else if (reach.plans().isEmpty()) {
			warnings.add(subject + " reaches only the listed keys " + reach.keys()
					+ ": every other caller is decided by a plan that sets these numbers itself");
		}
		return affects(reach, recent);
	}

	/**
	 * Reports whom the removal of an override reaches; a removal that reaches no
	 * caller is not refused, since it only tidies up, but says so.
	 * @param target {@code ""} for the limit's own numbers, else a plan
	 * @param before the definition in force
	 * @param after the definition without the override
	 * @param warnings receives what the operator should know
	 * @return whom it reaches
	 */
	AffectsDescriptor removal(String target, LimitDefinition<? extends Limit> before,
			LimitDefinition<? extends Limit> after, List<String> warnings) {
		ChangeReach reach = ChangeReach.between(before, after);
		if (reach.isEmpty()) {
			warnings.add("Removing the override of " + subject(after, target) + " changes no caller's limit");
		}
		return affects(reach, recent(after));
	}

	/** Why an override changes no caller, or {@code null} when it changes some. */
	private static @Nullable String problem(ChangeReach reach, String target, LimitDefinition<? extends Limit> after,
			@Nullable RecentCallersDescriptor recent) {
		if (reach.isEmpty()) {
			if (target.isEmpty() && after.planExpression() != null) {
				return "changes no caller: every caller is decided by one of the plans "
						+ after.planQuotas().keySet() + " (a caller without a plan by the default plan '"
						+ after.defaultPlan() + "'), and each sets these numbers itself";
			}
			return "changes no caller: the numbers its callers are decided by stay as they are";
		}
		if (recent == null || reach.plans().isEmpty()) {
			return null;
		}
		long reached = 0;
		long all = 0;
		for (Map.Entry<String, Long> count : recent.byPlan().entrySet()) {
			all += count.getValue();
			boolean listed = LISTED_KEYS.equals(count.getKey()) && !reach.keys().isEmpty();
			if (listed || reach.plans().contains(target(count.getKey()))) {
				reached += count.getValue();
			}
		}
		if (reached == 0 && all > 0) {
			return "changes no recent caller: none of the callers this instance decided in the last "
					+ recent.window() + " was on the plans " + labels(reach.plans()) + " (recent callers: "
					+ recent.byPlan() + ")";
		}
		return null;
	}

	/** The same numbers for each other plan, the plan with most recent callers first. */
	private static List<Map<String, Object>> instead(String target, Quota quota,
			LimitDefinition<? extends Limit> after, @Nullable RecentCallersDescriptor recent) {
		List<String> plans = new ArrayList<>(after.planQuotas().keySet());
		plans.remove(target);
		if (recent != null) {
			plans.sort(Comparator.comparing((String plan) -> recent.byPlan().getOrDefault(plan, 0L)).reversed());
		}
		List<Map<String, Object>> instead = new ArrayList<>();
		for (String plan : plans) {
			Map<String, Object> body = new LinkedHashMap<>();
			body.put("plan", plan);
			body.putAll(quota.numbers());
			instead.add(body);
		}
		return instead;
	}

	private static AffectsDescriptor affects(ChangeReach reach, @Nullable RecentCallersDescriptor recent) {
		Long callers = null;
		if (recent != null) {
			long sum = 0;
			for (String plan : reach.plans()) {
				sum += recent.byPlan().getOrDefault(label(plan), 0L);
			}
			if (!reach.keys().isEmpty()) {
				sum += recent.byPlan().getOrDefault(LISTED_KEYS, 0L);
			}
			callers = sum;
		}
		return new AffectsDescriptor(labels(reach.plans()), reach.keys(), callers);
	}

	private static String body(Map<String, Object> body) {
		StringBuilder json = new StringBuilder("{");
		body.forEach((name, value) -> json.append((json.length() > 1) ? "," : "")
			.append('"')
			.append(name)
			.append("\":")
			.append((value instanceof Number) ? value : "\"" + value + "\""));
		return json.append('}').toString();
	}

	private static String subject(LimitDefinition<? extends Limit> definition, String target) {
		Limit limit = definition.limit();
		return limit.kind().label() + " '" + limit.name() + "'" + (target.isEmpty() ? "" : " plan '" + target + "'");
	}

	private static List<String> labels(List<String> targets) {
		return targets.stream().map(ChangeReports::label).toList();
	}

	private static String label(String target) {
		return target.isEmpty() ? RateLimitEndpoint.OWN : target;
	}

	private static String target(String label) {
		return RateLimitEndpoint.OWN.equals(label) ? "" : label;
	}

}
