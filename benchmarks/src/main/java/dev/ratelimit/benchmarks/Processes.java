package dev.ratelimit.benchmarks;

import java.util.concurrent.TimeUnit;

/**
 * Stops the processes the benchmarks start (servers, gateways), one way for
 * all of them.
 */
final class Processes {

	private Processes() {
	}

	/**
	 * Asks a process to stop, and kills it if it has not within 10 seconds.
	 * @param process the process
	 */
	static void stop(Process process) {
		process.destroy();
		try {
			if (!process.waitFor(10, TimeUnit.SECONDS)) {
				process.destroyForcibly();
				process.waitFor(10, TimeUnit.SECONDS);
			}
		}
		catch (InterruptedException ex) {
			process.destroyForcibly();
			Thread.currentThread().interrupt();
		}
	}

}
