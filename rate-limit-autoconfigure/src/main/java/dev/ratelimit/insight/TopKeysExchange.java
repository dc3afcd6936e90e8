package dev.ratelimit.insight;

import java.util.List;

import dev.ratelimit.core.LimitKind;
import dev.ratelimit.insight.HeavyHitters.Snapshot;

/**
 * Where instances sharing a backend leave their heavy hitters for each other,
 * so that any instance can list a limit's heaviest keys across the fleet.
 * Called from a background task and from the actuator endpoint, never on a
 * request's path.
 */
public interface TopKeysExchange {

	/**
	 * Publishes this instance's snapshot of a limit.
	 * @param kind the limit's kind
	 * @param name the limit's name
	 * @param snapshot its counts on this instance
	 */
	void publish(LimitKind kind, String name, Snapshot snapshot);

	/**
	 * Reads the other instances' recent snapshots of a limit.
	 * @param kind the limit's kind
	 * @param name the limit's name
	 * @return their snapshots, those older than the exchange keeps left out
	 */
	List<Snapshot> others(LimitKind kind, String name);

}
