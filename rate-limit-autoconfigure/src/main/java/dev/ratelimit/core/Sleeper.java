package dev.ratelimit.core;

import java.util.concurrent.TimeUnit;

/**
 * Waits: how a caller of a shaping policy waits for its turn. Injected so that
 * tests can move a manual clock instead of waiting.
 */
@FunctionalInterface
public interface Sleeper {

	/**
	 * Waits for the given time.
	 * @param micros the time to wait in microseconds
	 * @throws InterruptedException if the thread is interrupted while waiting
	 */
	void sleepMicros(long micros) throws InterruptedException;

	/**
	 * Returns a sleeper that really waits.
	 * @return the system sleeper
	 */
	static Sleeper system() {
		return (micros) -> TimeUnit.MICROSECONDS.sleep(micros);
	}

}
