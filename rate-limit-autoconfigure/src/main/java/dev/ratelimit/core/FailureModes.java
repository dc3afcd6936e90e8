package dev.ratelimit.core;

/**
 * Applies a limit's {@link FailureMode} to a call its store could not decide,
 * because the store is unavailable, the same for every kind of limit: closed
 * refuses the call, local decides it in this instance's memory when there is
 * such a store to turn to, and open (or local without one) lets it through
 * unchecked. Each outcome is told to the listener. (An in-memory store always
 * decides: at its bound of keys a new key is decided on an overflow slot, see
 * {@link KeyBound}.)
 */
public final class FailureModes {

	private FailureModes() {
	}

	/**
	 * Applies a limit's failure mode to a call its store could not decide.
	 * @param limit the limit
	 * @param cause why the store could not decide
	 * @param localStore whether an in-memory store can decide the call instead
	 * @param listener hears the fallback
	 * @return {@link Fallback#LOCAL} to decide the call in memory,
	 * {@link Fallback#UNENFORCED} to let it through unchecked
	 * @throws RateLimitBackendUnavailableException when the limit fails closed
	 */
	public static Fallback apply(Limit limit, RuntimeException cause, boolean localStore, LimitListener listener) {
		if (limit.failureMode() == FailureMode.CLOSED) {
			listener.fellBack(limit, FailureMode.CLOSED, cause);
			throw new RateLimitBackendUnavailableException(limit.name(), cause);
		}
		if (limit.failureMode() == FailureMode.LOCAL && localStore) {
			listener.fellBack(limit, FailureMode.LOCAL, cause);
			return Fallback.LOCAL;
		}
		listener.fellBack(limit, FailureMode.OPEN, cause);
		return Fallback.UNENFORCED;
	}

	/**
	 * What a call whose store could not decide goes on with.
	 */
	public enum Fallback {

		/** Decided by an in-memory store instead. */
		LOCAL,

		/** Let through without the limit. */
		UNENFORCED

	}

}
