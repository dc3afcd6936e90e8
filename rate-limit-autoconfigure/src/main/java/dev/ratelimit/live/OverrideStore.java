package dev.ratelimit.live;

import java.util.Map;

import dev.ratelimit.core.Quota;

/**
 * Where run-time overrides of limits' numbers are kept: in this process, or in
 * a store every instance shares (Redis), so that an override made on one
 * instance applies on all of them and outlives a restart.
 * <p>
 * A store keeps what it is given; checking an override against its limit is
 * {@link LimitOverrides}'s job. Entries a store cannot read (written by hand,
 * say) are left out of {@link #load()}, never thrown.
 */
public interface OverrideStore {

	/**
	 * Returns a token that changes whenever the overrides change, so that a poll
	 * reads the whole set only when it changed.
	 * @return the version
	 * @throws RuntimeException if the store cannot answer
	 */
	long version();

	/**
	 * Reads every override.
	 * @return quotas by limit name, then by target ({@code ""} for the limit itself, else a plan)
	 * @throws RuntimeException if the store cannot answer
	 */
	Map<String, Map<String, Quota>> load();

	/**
	 * Sets or replaces one override.
	 * @param limit the limit's name
	 * @param target {@code ""} for the limit itself, else a plan's name
	 * @param quota the numbers
	 * @throws RuntimeException if the store cannot answer
	 */
	void put(String limit, String target, Quota quota);

	/**
	 * Removes one override.
	 * @param limit the limit's name
	 * @param target {@code ""} for the limit itself, else a plan's name
	 * @throws RuntimeException if the store cannot answer
	 */
	void remove(String limit, String target);

	/**
	 * Returns whether other instances share the store, so that its changes must
	 * be polled for.
	 * @return whether it is shared
	 */
	boolean isShared();

}
