package dev.ratelimit.insight;

import java.util.List;

/**
 * Where instances sharing a backend leave what each counted for the others
 * (heavy hitters, recent callers by plan), so that any instance can answer for
 * the fleet. Each instance publishes its latest text per topic and limit; a
 * reader gets the other instances' latest, those too old to count left out.
 * Called from a background task and from the actuator endpoint, never on a
 * request's path.
 */
public interface FleetExchange {

	/**
	 * Publishes this instance's latest text.
	 * @param topic what it is, such as {@code top} or {@code callers}
	 * @param limit the limit it is about
	 * @param text the text, replacing this instance's previous one
	 */
	void publish(String topic, String limit, String text);

	/**
	 * Reads the other instances' latest texts.
	 * @param topic what it is
	 * @param limit the limit it is about
	 * @return their texts, those older than the exchange keeps left out
	 */
	List<String> others(String topic, String limit);

}
