package dev.ratelimit.core;

/**
 * Implemented by a store's failure that says a write was applied by the
 * store's primary but not confirmed durable in time: the replicas the store
 * waits for did not acknowledge it (see the Redis store's durability), so a
 * failover may lose it, or it may stay. The call it belonged to follows its
 * limit's failure mode like any failed call; a caller that must not leave
 * such a write behind (a budget's reservation, which would hold its estimate
 * until it times out) undoes it.
 */
public interface UnconfirmedWrite {

	/**
	 * Returns whether a failure, or one of its causes, is an unconfirmed write.
	 * @param failure the failure
	 * @return whether the write may have been applied
	 */
	static boolean in(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = (cause.getCause() != cause) ? cause.getCause() : null) {
			if (cause instanceof UnconfirmedWrite) {
				return true;
			}
		}
		return false;
	}

}
