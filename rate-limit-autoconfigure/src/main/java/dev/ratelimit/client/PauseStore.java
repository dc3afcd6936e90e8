package dev.ratelimit.client;

/**
 * Where a provider's "stop until T" is kept: in this process, or in the
 * backend, where every instance sees it. Two pauses of one provider keep the
 * later end.
 */
public interface PauseStore {

	/**
	 * Returns how long a provider is still paused.
	 * @param client the provider's name
	 * @return the time left in microseconds, zero when not paused
	 */
	long remainingMicros(String client);

	/**
	 * Pauses a provider, unless a pause that ends later is in force.
	 * @param client the provider's name
	 * @param micros how long from now
	 */
	void pause(String client, long micros);

	/**
	 * Returns whether every instance of the application sees this store's pauses.
	 * @return whether the pauses are shared
	 */
	boolean isShared();

}
