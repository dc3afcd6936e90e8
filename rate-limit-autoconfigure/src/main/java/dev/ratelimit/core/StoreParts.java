package dev.ratelimit.core;

/**
 * Where a store keeps a key, in parts that fail alone: the masters of a Redis
 * Cluster, each owning its slots. A store of one piece (a server, a Sentinel
 * master, memory) has one part, {@code ""}. Health is tracked per part (see
 * {@link StoreHealth}): a part that fails affects the keys it keeps, and is one
 * warning, however many calls to the other parts succeed meanwhile.
 */
public interface StoreParts {

	/** A store of one part. */
	StoreParts ONE = (key) -> "";

	/**
	 * Returns the part that keeps a key now, as log lines name it.
	 * @param key the storage key
	 * @return the part, {@code ""} for a store of one part
	 */
	String partOf(String key);

	/**
	 * Returns whether a part named earlier still keeps keys: {@code false} once a
	 * failover or a migration moved them all elsewhere (a failed Cluster master
	 * whose replica took its slots), so that its failure no longer counts.
	 * @param part a part {@link #partOf} returned
	 * @return whether it keeps keys
	 */
	default boolean keepsKeys(String part) {
		return true;
	}

}
