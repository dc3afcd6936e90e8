package dev.ratelimit.core;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The configured limits of one kind, by name, in configuration order. The set
 * of names is fixed at start-up; each limit is {@link LiveLimit live}, so that
 * its numbers may change while the application runs, and {@link #find} and
 * {@link #all} return the limits as they stand now.
 *
 * @param <L> the kind of limit
 */
public final class NamedLimits<L extends Limit> {

	private final LimitKind kind;

	private final Map<String, LiveLimit<L>> byName;

	/**
	 * Creates a registry of limits without plans, overrides or exemptions.
	 * @param kind the kind of every limit in it
	 * @param limits the limits, in configuration order; names must be unique
	 * @throws IllegalArgumentException if a name is used twice, or a limit is of another kind
	 */
	public NamedLimits(LimitKind kind, Collection<L> limits) {
		this(kind, limits.stream().map(LimitDefinition::of).toList(), true);
	}

	private NamedLimits(LimitKind kind, List<LimitDefinition<L>> definitions, boolean checked) {
		this.kind = kind;
		Map<String, LiveLimit<L>> map = new LinkedHashMap<>();
		for (LimitDefinition<L> definition : definitions) {
			L limit = definition.limit();
			if (limit.kind() != kind) {
				throw new IllegalArgumentException(limit.kind().label() + " '" + limit.name() + "' is not a "
						+ kind.label());
			}
			if (map.putIfAbsent(limit.name(), new LiveLimit<>(definition)) != null) {
				throw new IllegalArgumentException("Duplicate " + kind.label() + " name '" + limit.name() + "'");
			}
		}
		// A LinkedHashMap keeps configuration order, which Map.copyOf would not.
		this.byName = Collections.unmodifiableMap(map);
	}

	/**
	 * Creates a registry of limits with their plans, overrides and exemptions.
	 * @param <L> the kind of limit
	 * @param kind the kind of every limit in it
	 * @param definitions the definitions, in configuration order; names must be unique
	 * @return the registry
	 * @throws IllegalArgumentException if a name is used twice, or a limit is of another kind
	 */
	public static <L extends Limit> NamedLimits<L> of(LimitKind kind, Collection<LimitDefinition<L>> definitions) {
		return new NamedLimits<>(kind, List.copyOf(definitions), true);
	}

	/** @return the kind of the limits */
	public LimitKind kind() {
		return this.kind;
	}

	/**
	 * Finds a limit, as it stands now.
	 * @param name the name
	 * @return the limit, if configured
	 */
	public Optional<L> find(String name) {
		LiveLimit<L> live = this.byName.get(name);
		return (live != null) ? Optional.of(live.current().limit()) : Optional.empty();
	}

	/**
	 * Finds a limit's live definition.
	 * @param name the name
	 * @return the live limit, if configured
	 */
	public Optional<LiveLimit<L>> live(String name) {
		return Optional.ofNullable(this.byName.get(name));
	}

	/** @return the live limits, in configuration order */
	public Collection<LiveLimit<L>> lives() {
		return this.byName.values();
	}

	/** @return the configured names, in configuration order */
	public List<String> names() {
		return List.copyOf(this.byName.keySet());
	}

	/** @return every limit as it stands now, in configuration order */
	public List<L> all() {
		List<L> all = new ArrayList<>(this.byName.size());
		for (LiveLimit<L> live : this.byName.values()) {
			all.add(live.current().limit());
		}
		return all;
	}

}
