package dev.ratelimit.concurrency;

/**
 * A permit to run one call: hold it while the call runs, release it when the
 * call ends. Releasing twice is harmless.
 * <p>
 * An adaptive cap learns from how calls end: {@link #release(Ending)} tells it.
 * {@link #release()} says the call succeeded; a fixed cap ignores the ending.
 */
public interface Permit extends AutoCloseable {

	/**
	 * Gives the permit back after a call that succeeded.
	 */
	void release();

	/**
	 * Gives the permit back, saying how the call ended.
	 * @param ending how the call ended
	 */
	default void release(Ending ending) {
		release();
	}

	/**
	 * Gives the permit back, for try-with-resources: as a success.
	 */
	@Override
	default void close() {
		release();
	}

	/**
	 * How a call that held a permit ended, for an adaptive cap's estimate.
	 */
	enum Ending {

		/** It did its work; its latency is a sample of the service's. */
		SUCCEEDED,

		/** It failed or timed out: a sign of overload, which lowers the limit (a drop). */
		FAILED,

		/**
		 * It ended before its work could say anything about the service (its client
		 * went away, or another limit refused it first): left out of the estimate.
		 */
		ABANDONED

	}

}
