package dev.ratelimit.core;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The configured limits of one kind, by name, in configuration order.
 * Immutable.
 *
 * @param <L> the kind of limit
 */
public final class NamedLimits<L extends Limit> {

	private final LimitKind kind;

	private final Map<String, L> byName;

	private final List<L> all;

	/**
	 * Creates a registry.
	 * @param kind the kind of every limit in it
	 * @param limits the limits, in configuration order; names must be unique
	 * @throws IllegalArgumentException if a name is used twice, or a limit is of another kind
	 */
	public NamedLimits(LimitKind kind, Collection<L> limits) {
		this.kind = kind;
		Map<String, L> map = new LinkedHashMap<>();
		for (L limit : limits) {
			if (limit.kind() != kind) {
				throw new IllegalArgumentException(limit.kind().label() + " '" + limit.name() + "' is not a "
						+ kind.label());
			}
			if (map.putIfAbsent(limit.name(), limit) != null) {
				throw new IllegalArgumentException("Duplicate " + kind.label() + " name '" + limit.name() + "'");
			}
		}
		// A LinkedHashMap keeps configuration order, which Map.copyOf would not.
		this.byName = Collections.unmodifiableMap(map);
		this.all = List.copyOf(map.values());
	}

	/** @return the kind of the limits */
	public LimitKind kind() {
		return this.kind;
	}

	/**
	 * Finds a limit.
	 * @param name the name
	 * @return the limit, if configured
	 */
	public Optional<L> find(String name) {
		return Optional.ofNullable(this.byName.get(name));
	}

	/** @return the configured names, in configuration order */
	public List<String> names() {
		return List.copyOf(this.byName.keySet());
	}

	/** @return every limit, in configuration order */
	public List<L> all() {
		return this.all;
	}

}
