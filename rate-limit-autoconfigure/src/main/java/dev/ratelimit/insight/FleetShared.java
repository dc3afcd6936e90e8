package dev.ratelimit.insight;

/**
 * Something each instance counts and shares with the fleet through a
 * {@link FleetExchange}: published every few seconds by a background task.
 */
public interface FleetShared {

	/**
	 * Publishes this instance's counts.
	 * @param exchange where to
	 */
	void publishTo(FleetExchange exchange);

}
