package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * CPU time a running JVM has used so far, read from Linux's {@code /proc}:
 * the whole process ({@code utime + stime} of {@code /proc/<pid>/stat}, every
 * thread it ever had included) and, of its live threads, the main thread and
 * the JIT compiler threads, so that a reader can tell the application's work
 * from the compilation it causes (the part that swings most from run to run).
 *
 * @param totalSeconds the process's user plus system CPU seconds
 * @param mainSeconds the main thread's (the one running {@code SpringApplication.run})
 * @param jitSeconds the C1 and C2 compiler threads'
 */
record ProcessCpu(double totalSeconds, double mainSeconds, double jitSeconds) {

	/** Clock ticks per second of {@code /proc}'s times: {@code getconf CLK_TCK}, 100 on every common Linux. */
	private static final double TICKS = clockTicks();

	/**
	 * Reads the CPU time of a process now.
	 * @param pid the process
	 * @return its CPU time
	 * @throws IllegalStateException if {@code /proc} cannot be read (not Linux, or the process is gone)
	 */
	static ProcessCpu of(long pid) {
		Path process = Path.of("/proc", Long.toString(pid));
		try {
			long total = ticks(Files.readString(process.resolve("stat"), StandardCharsets.US_ASCII));
			long main = 0;
			long jit = 0;
			List<Path> tasks;
			try (Stream<Path> listed = Files.list(process.resolve("task"))) {
				tasks = listed.toList();
			}
			for (Path task : tasks) {
				String stat;
				try {
					stat = Files.readString(task.resolve("stat"), StandardCharsets.US_ASCII);
				}
				catch (NoSuchFileException ex) {
					continue;
				}
				String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
				// The launcher's own thread (tid == pid) only waits; the JVM does not rename the Java main thread.
				if (name.equals("java") && !task.getFileName().toString().equals(Long.toString(pid))) {
					main += ticks(stat);
				}
				else if (isJitThread(name)) {
					jit += ticks(stat);
				}
			}
			return new ProcessCpu(total / TICKS, main / TICKS, jit / TICKS);
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot read the CPU time of process " + pid + " from " + process
					+ " (Linux /proc needed)", ex);
		}
	}

	/**
	 * Whether a thread is one of the JIT compiler's, by its Linux name ({@code comm},
	 * cut to 15 characters: {@code C2 CompilerThre}).
	 * @param linuxName the thread's name in {@code /proc/<pid>/task/<tid>/comm}
	 * @return whether it compiles
	 */
	static boolean isJitThread(String linuxName) {
		return linuxName.startsWith("C1 CompilerThre") || linuxName.startsWith("C2 CompilerThre");
	}

	/** utime + stime: fields 14 and 15, counted after the command name, which may hold spaces. */
	private static long ticks(String stat) {
		String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
		return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
	}

	private static double clockTicks() {
		try {
			Process getconf = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
			String out = new String(getconf.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).strip();
			return (getconf.waitFor() == 0) ? Double.parseDouble(out) : 100;
		}
		catch (IOException | NumberFormatException ex) {
			return 100;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new UncheckedIOException(new IOException("Interrupted reading CLK_TCK", ex));
		}
	}

}
