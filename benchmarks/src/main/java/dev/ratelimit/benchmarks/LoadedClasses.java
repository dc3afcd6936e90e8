package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * How many classes a running JVM has loaded, read with the JDK's
 * {@code jstat -class}: it maps the JVM's performance-data file
 * ({@code /tmp/hsperfdata_<user>/<pid>}) rather than attaching, so it runs no
 * code in the JVM it reads and adds nothing to that JVM's CPU time. A start's
 * classes are what it brings onto the start-up path: a figure that, unlike
 * CPU time, is the same from start to start.
 */
final class LoadedClasses {

	private LoadedClasses() {
	}

	/**
	 * Reads the classes a JVM has loaded so far.
	 * @param pid the JVM's process id
	 * @return the count, or -1 when it could not be read (no {@code jstat}, or performance data off)
	 */
	static long of(long pid) {
		Path jstat = Path.of(System.getProperty("java.home"), "bin", "jstat");
		try {
			Process process = new ProcessBuilder(jstat.toString(), "-class", Long.toString(pid))
				.redirectErrorStream(true)
				.start();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
			if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
				return -1;
			}
			// "Loaded  Bytes  Unloaded  Bytes     Time" then the figures.
			String[] lines = output.trim().split("\n");
			return Long.parseLong(lines[lines.length - 1].trim().split("\\s+")[0]);
		}
		catch (IOException | NumberFormatException ex) {
			return -1;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return -1;
		}
	}

}
