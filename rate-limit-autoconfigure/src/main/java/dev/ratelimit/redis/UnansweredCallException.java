package dev.ratelimit.redis;

import org.springframework.dao.QueryTimeoutException;

import dev.ratelimit.core.UnconfirmedWrite;

/**
 * A limiter call that passed the gates and got no reply in time: Redis froze
 * or stalled with the call written to it (or about to be), and may apply it
 * when it answers again, after its caller followed the limit's failure mode.
 * What it may have taken is given back by whoever can undo it: a budget's
 * reservation is released, a distributed permit too (see
 * {@link UnconfirmedWrite}); undoing what Redis never applied changes
 * nothing.
 */
final class UnansweredCallException extends QueryTimeoutException implements UnconfirmedWrite {

	private static final long serialVersionUID = 1L;

	UnansweredCallException(QueryTimeoutException timeout) {
		super(String.valueOf(timeout.getMessage()), timeout);
	}

	/**
	 * Returns the failure a call that passed the gates met, marked when it may
	 * have been applied: a timeout (not an answer saying it failed, nor a
	 * refusal at the gates, nor a lost connection, whose calls Lettuce fails
	 * without telling whether Redis ran them).
	 * @param failure the call's failure
	 * @return the failure to tell of
	 */
	static RuntimeException marked(RuntimeException failure) {
		if (failure instanceof QueryTimeoutException timeout && !(failure instanceof UnconfirmedWrite)) {
			return new UnansweredCallException(timeout);
		}
		return failure;
	}

}
