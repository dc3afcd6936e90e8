package dev.ratelimit.actuate;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitKind;

/**
 * The configured limits that refuse calls while Redis cannot answer (see
 * {@link Limit#failsClosed()}): rate limits with {@code failure-mode: closed}
 * (shadow ones never refuse), budgets with {@code failure-mode: closed} (the
 * default for budgets) and distributed concurrency caps with
 * {@code failure-mode: closed}. A Redis outage is an outage of the application
 * only through them. Inline policies of annotations fail local (they cannot
 * choose a mode), local concurrency caps never ask Redis.
 */
final class FailClosedPolicies {

	private final Map<LimitKind, List<String>> names;

	/**
	 * Finds the fail-closed limits among the configured ones.
	 * @param limits the configured limits
	 */
	FailClosedPolicies(LimitRegistry limits) {
		// Created with the context: loops rather than lambdas, each of which is a class spun at start-up.
		Map<LimitKind, List<String>> found = new EnumMap<>(LimitKind.class);
		for (Limit limit : limits.all()) {
			if (limit.failsClosed()) {
				List<String> kind = found.get(limit.kind());
				if (kind == null) {
					kind = new ArrayList<>();
					found.put(limit.kind(), kind);
				}
				kind.add(limit.name());
			}
		}
		Map<LimitKind, List<String>> names = new EnumMap<>(LimitKind.class);
		for (Map.Entry<LimitKind, List<String>> kind : found.entrySet()) {
			names.put(kind.getKey(), List.copyOf(kind.getValue()));
		}
		this.names = Collections.unmodifiableMap(names);
	}

	/**
	 * Returns whether no limit fails closed.
	 * @return whether none does
	 */
	boolean isEmpty() {
		return this.names.isEmpty();
	}

	/**
	 * Returns whether no limit of the given kinds fails closed.
	 * @param kinds the kinds
	 * @return whether none does
	 */
	boolean isEmpty(Collection<LimitKind> kinds) {
		return kinds.stream().noneMatch(this.names::containsKey);
	}

	/**
	 * Returns the fail-closed limits' names by kind ({@code rateLimits},
	 * {@code budgets}, {@code concurrency}), kinds without any left out.
	 * @return the names
	 */
	Map<String, List<String>> names() {
		return names(this.names.keySet());
	}

	/**
	 * Returns the names of the fail-closed limits of some kinds, as
	 * {@link #names()} does.
	 * @param kinds the kinds
	 * @return the names
	 */
	Map<String, List<String>> names(Collection<LimitKind> kinds) {
		Map<String, List<String>> names = new LinkedHashMap<>();
		this.names.forEach((kind, found) -> {
			if (kinds.contains(kind)) {
				names.put(detailName(kind), found);
			}
		});
		return names;
	}

	/**
	 * Returns how the health details name a kind of limit.
	 * @param kind the kind
	 * @return its name in the details
	 */
	static String detailName(LimitKind kind) {
		return switch (kind) {
			case RATE_LIMIT -> "rateLimits";
			case BUDGET -> "budgets";
			case CONCURRENCY -> "concurrency";
		};
	}

}
