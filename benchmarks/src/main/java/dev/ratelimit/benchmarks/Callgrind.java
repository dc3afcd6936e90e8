package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Instruction counts of a {@code redis-server} run under
 * {@code valgrind --tool=callgrind}: a measure that, unlike time, other load
 * on the machine does not change. Counting starts when the server does;
 * {@link #zero} restarts it, {@link #dump} writes what was counted since, and
 * {@link Counts} reads a dump: the whole server's instructions, and those of
 * one function with everything it calls (the command's own, as
 * {@code usec_per_call} times it). Needs {@code valgrind},
 * {@code callgrind_control} and {@code callgrind_annotate} on the {@code PATH}.
 */
final class Callgrind implements AutoCloseable {

	private final Path directory;

	private final Path control;

	private final Path annotate;

	private Callgrind(Path directory, Path control, Path annotate) {
		this.directory = directory;
		this.control = control;
		this.annotate = annotate;
	}

	/**
	 * Finds the tools and makes a directory for the dumps.
	 * @return the instruments, not yet attached to a server
	 * @throws IllegalStateException if valgrind's tools are missing
	 */
	static Callgrind prepare() {
		Path control = RedisServerProcess.executable("callgrind_control", "benchmark.callgrind-control",
				"install valgrind");
		Path annotate = RedisServerProcess.executable("callgrind_annotate", "benchmark.callgrind-annotate",
				"install valgrind");
		try {
			return new Callgrind(Files.createTempDirectory("benchmark-callgrind-"), control, annotate);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** What to start the server under. */
	List<String> wrapper() {
		Path valgrind = RedisServerProcess.executable("valgrind", "benchmark.valgrind", "install valgrind");
		return List.of(valgrind.toString(), "--tool=callgrind", "--callgrind-out-file="
				+ this.directory.resolve("callgrind.out.%p"));
	}

	/** Restarts the count of a server started under {@link #wrapper()}. */
	void zero(RedisServerProcess server) {
		run(this.control.toString(), "-z", Long.toString(server.pid()));
	}

	/** Writes what was counted since the last zero or dump, and reads it. */
	Counts dump(RedisServerProcess server) {
		run(this.control.toString(), "-d", Long.toString(server.pid()));
		try (Stream<Path> files = Files.list(this.directory)) {
			// callgrind.out.<pid>.<n>, numbered in order.
			Path newest = files.filter((f) -> f.getFileName().toString().matches("callgrind\\.out\\.\\d+\\.\\d+"))
				.max(Comparator.comparingInt((f) -> Integer.parseInt(f.getFileName().toString().replaceAll(".*\\.", ""))))
				.orElseThrow(() -> new IllegalStateException("callgrind wrote no dump in " + this.directory));
			return new Counts(newest, run(this.annotate.toString(), "--inclusive=yes", newest.toString()));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	@Override
	public void close() {
		try (Stream<Path> files = Files.list(this.directory)) {
			for (Path file : files.toList()) {
				Files.deleteIfExists(file);
			}
			Files.deleteIfExists(this.directory);
		}
		catch (IOException ex) {
			// Only temporary files are left behind.
		}
	}

	private static String run(String... command) {
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			if (process.waitFor() != 0) {
				throw new IllegalStateException(String.join(" ", command) + " failed: " + output);
			}
			return output;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** One dump: its file and {@code callgrind_annotate --inclusive=yes}'s report of it. */
	record Counts(Path file, String annotated) {

		/** Instructions the whole server ran in the period of the dump. */
		long total() {
			try (Stream<String> lines = Files.lines(this.file)) {
				return lines.filter((line) -> line.startsWith("summary:"))
					.mapToLong((line) -> Long.parseLong(line.substring("summary:".length()).trim()))
					.findFirst()
					.orElseThrow(() -> new IllegalStateException("No summary in " + this.file));
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		/**
		 * Instructions of one function and all it called, e.g. {@code incrCommand}
		 * (the server's binary exports its command functions' names).
		 * @param function the function's name
		 * @return the count, 0 if it never ran
		 */
		long inclusive(String function) {
			// "  29,712,952 (29.14%)  ???:incrCommand [/usr/bin/redis-server]"
			for (String line : this.annotated.split("\n")) {
				String trimmed = line.trim();
				int name = trimmed.indexOf(":" + function + " ");
				if (name > 0 && Character.isDigit(trimmed.charAt(0))) {
					return Long.parseLong(trimmed.substring(0, trimmed.indexOf(' ')).replace(",", ""));
				}
			}
			return 0;
		}

	}

}
