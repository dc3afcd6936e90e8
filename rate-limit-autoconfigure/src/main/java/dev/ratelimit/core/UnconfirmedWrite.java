package dev.ratelimit.core;

/**
 * Implemented by a store's failure that says a write may have been applied
 * though its caller was not told so: no answer came in time (the store froze
 * or stalled with the call written to it, and may apply it when it answers
 * again), or the store's primary applied
 * it and the replicas the store waits for did not acknowledge it in time (see
 * the Redis store's durability), so a failover may lose it, or it may stay.
 * The call it belonged to follows its limit's failure mode like any failed
 * call; a caller that must not leave such a write behind undoes it once the
 * store answers (see {@link PendingWrites}): a budget's reservation, which
 * would hold its estimate until it times out, and a distributed permit, which
 * would hold a place of its cap until its lease ends.
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
