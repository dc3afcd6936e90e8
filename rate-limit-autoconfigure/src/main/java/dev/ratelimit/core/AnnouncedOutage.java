package dev.ratelimit.core;

/**
 * Implemented by a store's failure that the store has already told of: a
 * failover its connection follows, announced with one warning of its own (see
 * the Redis store's failover follower). Whoever logs the failure again logs it
 * at a lower level, so that a failover reads as one warning, not one per kind
 * of limit and per listener.
 */
public interface AnnouncedOutage {

	/**
	 * Returns whether a failure, or one of its causes, is an announced outage.
	 * @param failure the failure
	 * @return whether the store told of it already
	 */
	static boolean in(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = (cause.getCause() != cause) ? cause.getCause() : null) {
			if (cause instanceof AnnouncedOutage) {
				return true;
			}
		}
		return false;
	}

}
