package dev.ratelimit.core;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

/**
 * Something kept per limit (its meters, its sketches, its trace key names),
 * created at the limit's first event and found again by kind and name without
 * building a string: what every listener that keeps state per limit needs.
 * Kinds are kept apart, since a policy and a budget may share a name.
 *
 * @param <T> what is kept per limit
 */
public final class PerLimit<T> {

	private final List<Map<String, T>> byKind;

	private final Function<Limit, T> create;

	/**
	 * Creates the table.
	 * @param create makes a limit's state at its first event
	 */
	public PerLimit(Function<Limit, T> create) {
		List<Map<String, T>> maps = new ArrayList<>();
		for (int i = 0; i < LimitKind.values().length; i++) {
			maps.add(new ConcurrentHashMap<>());
		}
		this.byKind = List.copyOf(maps);
		this.create = create;
	}

	/**
	 * Returns a limit's state, creating it at the first call: a map look-up, no
	 * allocation once created.
	 * @param limit the limit
	 * @return its state
	 */
	public T of(Limit limit) {
		Map<String, T> byName = this.byKind.get(limit.kind().ordinal());
		T state = byName.get(limit.name());
		return (state != null) ? state : byName.computeIfAbsent(limit.name(), (name) -> this.create.apply(limit));
	}

	/**
	 * Finds a limit's state.
	 * @param kind the limit's kind
	 * @param name the limit's name
	 * @return its state, or {@code null} when it has had no event
	 */
	public @Nullable T find(LimitKind kind, String name) {
		return this.byKind.get(kind.ordinal()).get(name);
	}

	/**
	 * Returns the names of the limits of a kind that have state.
	 * @param kind the kind
	 * @return their names, a copy
	 */
	public Set<String> names(LimitKind kind) {
		return Set.copyOf(this.byKind.get(kind.ordinal()).keySet());
	}

}
