package dev.ratelimit.core;

import org.jspecify.annotations.Nullable;

/**
 * A named limit of any kind: what every rate-limit policy, budget and
 * concurrency cap has in common, so that the plumbing around them (registry,
 * failure modes, visibility, listeners, reports) is written once.
 */
public interface Limit {

	/**
	 * Checks a limit's name: 1 to 64 letters, digits, {@code .}, {@code _} or
	 * {@code -}, starting with a letter or digit, since names appear in storage
	 * keys, header fields and metric tags. The same rule for every kind.
	 * @param name the name
	 * @return the name
	 * @throws PolicyValidationException if the name breaks the rule
	 */
	static String checkName(String name) {
		if (name == null || !LimitNames.PATTERN.matcher(name).matches()) {
			throw new PolicyValidationException("name", name,
					"use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit");
		}
		return name;
	}

	/** @return the limit's name, unique across every kind */
	String name();

	/** @return the limit's kind */
	LimitKind kind();

	/** @return the key expression: whose limit a call counts against */
	String key();

	/** @return what happens when the limit's store cannot answer */
	FailureMode failureMode();

	/**
	 * Returns whether the limit refuses its calls while its store cannot answer:
	 * a {@link FailureMode#CLOSED} limit whose decisions depend on the store. A
	 * store outage is an outage of the application only through such limits.
	 * @return whether the limit fails closed
	 */
	default boolean failsClosed() {
		return failureMode() == FailureMode.CLOSED;
	}

	/**
	 * Returns whether the limit lets its calls through unchecked while its store
	 * cannot answer: a {@link FailureMode#OPEN} limit whose decisions depend on
	 * the store. Through such limits a store outage, or a store too slow to
	 * answer in time, removes the limit.
	 * @return whether the limit fails open
	 */
	default boolean failsOpen() {
		return failureMode() == FailureMode.OPEN;
	}

	/** @return whether the limit is told to callers */
	Visibility visibility();

	/**
	 * Returns the plan this limit decides for: the plan's name on the variant a
	 * {@link LimitDefinition} builds for one of its plans, {@code null} on the
	 * limit itself and on a listed key's override. A label for reports (whom an
	 * operator's change reaches, how many callers each plan has), not a number
	 * that decides: every plan's variant keeps the limit's name and storage keys,
	 * and two variants with equal numbers are equal whatever their plans.
	 * @return the plan's name, or {@code null}
	 */
	default @Nullable String plan() {
		return null;
	}

	/**
	 * Returns this limit labelled as the variant of a plan (see {@link #plan()}).
	 * @param plan the plan's name
	 * @return the labelled limit; this limit when its kind keeps no label
	 */
	default Limit withPlan(String plan) {
		return this;
	}

	/**
	 * Returns this limit with some of its numbers replaced: a plan's quota, a
	 * per-key override or a run-time override. Every other value stays.
	 * @param quota the numbers to replace; {@link Quota#NONE} returns this limit
	 * @return the limit with the quota's numbers
	 * @throws PolicyValidationException if the quota sets a number the kind does
	 * not have, or a value the kind refuses
	 */
	Limit withQuota(Quota quota);

}

