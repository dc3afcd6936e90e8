package dev.ratelimit.autoconfigure;

import java.util.List;
import java.util.Map;

/**
 * Places outside the starter's own configuration that apply rate-limit
 * policies (a gateway's routes), for the start-up report: without them, a
 * policy used only there would be reported as applying nowhere.
 */
@FunctionalInterface
interface PolicyPlaces {

	/**
	 * Returns the places, as text, by policy name.
	 * @return the places
	 */
	Map<String, List<String>> rateLimitPlaces();

	/**
	 * Returns the places holding a permit of each concurrency cap, as text, by cap name.
	 * @return the places
	 */
	default Map<String, List<String>> capPlaces() {
		return Map.of();
	}

	/**
	 * Returns the places whose own key resolver keys a policy instead of the
	 * policy's key (a gateway route's {@code RequestRateLimiter}).
	 * @return by policy name, what keys each such place, as text, by the place
	 * as {@link #rateLimitPlaces()} names it
	 */
	default Map<String, Map<String, String>> keyResolvers() {
		return Map.of();
	}

}
