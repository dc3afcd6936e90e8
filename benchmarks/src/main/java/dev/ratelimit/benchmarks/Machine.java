package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What the benchmarks ran on, read off the machine: CPUs, memory, operating
 * system, Java and Redis versions.
 */
final class Machine {

	private Machine() {
	}

	static String describe() {
		Runtime runtime = Runtime.getRuntime();
		return "| Machine | |\n|---|---|\n"
				+ "| CPUs | " + runtime.availableProcessors() + " × " + procLine("/proc/cpuinfo", "model name") + " |\n"
				+ "| Memory | " + procLine("/proc/meminfo", "MemTotal") + " |\n"
				+ "| OS | " + System.getProperty("os.name") + " " + System.getProperty("os.version") + " " + System.getProperty("os.arch") + " |\n"
				+ "| Java | " + System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version") + ", heap max "
				+ (runtime.maxMemory() >> 20) + " MiB, default flags |\n"
				+ "| Redis | " + redisVersion() + ", on loopback, started by the benchmark, `--save \"\" --appendonly no` |\n";
	}

	private static String procLine(String file, String field) {
		try {
			List<String> lines = Files.readAllLines(Path.of(file), StandardCharsets.UTF_8);
			for (String line : lines) {
				if (line.startsWith(field)) {
					return line.substring(line.indexOf(':') + 1).strip();
				}
			}
		}
		catch (IOException ex) {
			// Not Linux: leave it unknown.
		}
		return "unknown";
	}

	private static String redisVersion() {
		try (RedisServerProcess server = RedisServerProcess.start()) {
			return "redis-server " + server.version();
		}
	}

}
