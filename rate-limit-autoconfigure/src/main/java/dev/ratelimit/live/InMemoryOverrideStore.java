package dev.ratelimit.live;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.ratelimit.core.Quota;

/**
 * Overrides kept in this process only: they apply to this instance and end
 * with it. The store of the in-memory backend.
 */
public final class InMemoryOverrideStore implements OverrideStore {

	private final Map<String, Map<String, Quota>> overrides = new LinkedHashMap<>();

	private long version;

	@Override
	public synchronized long version() {
		return this.version;
	}

	@Override
	public synchronized Map<String, Map<String, Quota>> load() {
		Map<String, Map<String, Quota>> copy = new LinkedHashMap<>();
		this.overrides.forEach((limit, targets) -> copy.put(limit, Map.copyOf(targets)));
		return copy;
	}

	@Override
	public synchronized void put(String limit, String target, Quota quota) {
		this.overrides.computeIfAbsent(limit, (name) -> new LinkedHashMap<>()).put(target, quota);
		this.version++;
	}

	@Override
	public synchronized void remove(String limit, String target) {
		Map<String, Quota> targets = this.overrides.get(limit);
		if (targets != null && targets.remove(target) != null) {
			if (targets.isEmpty()) {
				this.overrides.remove(limit);
			}
			this.version++;
		}
	}

	@Override
	public boolean isShared() {
		return false;
	}

}
