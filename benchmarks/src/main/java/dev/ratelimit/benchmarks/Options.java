package dev.ratelimit.benchmarks;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Command-line options of the benchmark mains: {@code --name value} pairs,
 * each with a default.
 */
final class Options {

	private final Map<String, String> values = new LinkedHashMap<>();

	private Options() {
	}

	static Options parse(String[] args) {
		Options options = new Options();
		for (int i = 0; i < args.length; i += 2) {
			if (!args[i].startsWith("--") || i + 1 == args.length) {
				throw new IllegalArgumentException("Expected --option value, got " + args[i]);
			}
			options.values.put(args[i].substring(2), args[i + 1]);
		}
		return options;
	}

	int integer(String name, int fallback) {
		String value = this.values.get(name);
		return (value != null) ? Integer.parseInt(value) : fallback;
	}

	String string(String name, String fallback) {
		return this.values.getOrDefault(name, fallback);
	}

	List<String> list(String name, String fallback) {
		return List.of(string(name, fallback).split(","));
	}

}
