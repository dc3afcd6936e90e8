package dev.ratelimit.concurrency;

/**
 * A permit to run one call: hold it while the call runs, release it when the
 * call ends. Releasing twice is harmless.
 */
public interface Permit extends AutoCloseable {

	/**
	 * Gives the permit back.
	 */
	void release();

	/**
	 * Gives the permit back, for try-with-resources.
	 */
	@Override
	default void close() {
		release();
	}

}
