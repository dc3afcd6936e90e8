package dev.ratelimit.client;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Uniform random numbers for backoff and pause jitter. Injected so that a test
 * can choose them; an application never needs another than {@link #random()}.
 */
@FunctionalInterface
public interface JitterSource {

	/**
	 * Returns the next number.
	 * @return a uniform random number in [0, 1)
	 */
	double next();

	/**
	 * Returns the source every thread draws from without contention.
	 * @return the thread-local random source
	 */
	static JitterSource random() {
		return () -> ThreadLocalRandom.current().nextDouble();
	}

}
