package dev.ratelimit.plans;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitDefinition;
import dev.ratelimit.live.LimitOverrides;

/**
 * Whom a change of a limit's definition reaches (an override, its removal, a
 * refresh): the plans whose callers are decided by other numbers after it, and
 * the listed keys. Found by comparing the numbers each caller is decided by
 * before and after, not by what the change names: an override of the limit's
 * own numbers reaches a plan's callers only through the numbers the plan does
 * not set itself, and, on a limit with plans, no caller at all is decided by
 * the limit's own numbers (callers without a plan get the default plan's).
 *
 * @param plans the plans whose callers' numbers change, in the definition's
 * order; {@code ""} stands for every caller of a limit without plans
 * @param keys the listed keys whose numbers change
 */
public record ChangeReach(List<String> plans, List<String> keys) {

	/** The target of the limit's own numbers: every caller of a limit without plans. */
	public static final String OWN = "";

	/**
	 * Compares the numbers every caller is decided by before and after a change.
	 * @param before the definition in force
	 * @param after the definition the change makes
	 * @return whom the change reaches
	 */
	public static ChangeReach between(LimitDefinition<? extends Limit> before, LimitDefinition<? extends Limit> after) {
		return new ChangeReach(changed(plans(before), plans(after)), changed(keys(before), keys(after)));
	}

	/** @return whether the change reaches no caller at all */
	public boolean isEmpty() {
		return this.plans.isEmpty() && this.keys.isEmpty();
	}

	/**
	 * Returns the targets whose callers a definition decides: its plans, or the
	 * limit's own numbers ({@link #OWN}) when it has none.
	 * @param definition the definition
	 * @return the targets, in the definition's order
	 */
	public static List<String> targets(LimitDefinition<? extends Limit> definition) {
		return new ArrayList<>(plans(definition).keySet());
	}

	private static Map<String, Map<String, Object>> plans(LimitDefinition<? extends Limit> definition) {
		Map<String, Map<String, Object>> numbers = new LinkedHashMap<>();
		if (definition.planExpression() == null) {
			numbers.put(OWN, LimitOverrides.numbers(definition.limit()));
		}
		else {
			for (String plan : definition.planQuotas().keySet()) {
				numbers.put(plan, LimitOverrides.numbers(definition.select(plan, null)));
			}
		}
		return numbers;
	}

	private static Map<String, Map<String, Object>> keys(LimitDefinition<? extends Limit> definition) {
		Map<String, Map<String, Object>> numbers = new LinkedHashMap<>();
		for (String key : definition.keyQuotas().keySet()) {
			Limit listed = Objects.requireNonNull(definition.keyOverride(key), "a listed key has its own variant");
			numbers.put(key, LimitOverrides.numbers(listed));
		}
		return numbers;
	}

	private static List<String> changed(Map<String, Map<String, Object>> before,
			Map<String, Map<String, Object>> after) {
		Set<String> targets = new LinkedHashSet<>(after.keySet());
		targets.addAll(before.keySet());
		List<String> changed = new ArrayList<>();
		for (String target : targets) {
			if (!Objects.equals(before.get(target), after.get(target))) {
				changed.add(target);
			}
		}
		return changed;
	}

}
