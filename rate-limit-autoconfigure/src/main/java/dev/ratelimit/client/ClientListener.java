package dev.ratelimit.client;

import java.util.List;

/**
 * Hears what a provider client does, for metrics. Every tag value comes from a
 * small fixed set, so that a listener can tag by it.
 */
public interface ClientListener {

	/** Hears nothing. */
	ClientListener NONE = new ClientListener() {
	};

	/**
	 * An attempt ended.
	 * @param client the provider's name
	 * @param outcome {@code success} (below 400), {@code 429}, {@code 503},
	 * {@code client-error}, {@code server-error}, {@code connect} (no connection)
	 * or {@code io} (another I/O failure)
	 */
	default void attempted(String client, String outcome) {
	}

	/**
	 * A call is tried again.
	 * @param client the provider's name
	 * @param cause {@code 429}, {@code 503} or {@code connect}
	 */
	default void retrying(String client, String cause) {
	}

	/**
	 * A call waited before an attempt.
	 * @param client the provider's name
	 * @param reason {@code backoff} (a retry's jittered wait) or {@code pause}
	 * (the provider's pause, from this call's answer or another's)
	 * @param micros how long
	 */
	default void waited(String client, String reason, long micros) {
	}

	/**
	 * A provider asked for a pause.
	 * @param client the provider's name
	 * @param source {@code retry-after} or {@code exhausted} (a quota reported at 0)
	 * @param micros how long
	 */
	default void paused(String client, String source, long micros) {
	}

	/**
	 * Returns a listener that tells each of several.
	 * @param listeners the listeners
	 * @return one listener
	 */
	static ClientListener of(List<ClientListener> listeners) {
		if (listeners.isEmpty()) {
			return NONE;
		}
		if (listeners.size() == 1) {
			return listeners.get(0);
		}
		return new ClientListener() {

			@Override
			public void attempted(String client, String outcome) {
				listeners.forEach((l) -> l.attempted(client, outcome));
			}

			@Override
			public void retrying(String client, String cause) {
				listeners.forEach((l) -> l.retrying(client, cause));
			}

			@Override
			public void waited(String client, String reason, long micros) {
				listeners.forEach((l) -> l.waited(client, reason, micros));
			}

			@Override
			public void paused(String client, String source, long micros) {
				listeners.forEach((l) -> l.paused(client, source, micros));
			}

		};
	}

}
