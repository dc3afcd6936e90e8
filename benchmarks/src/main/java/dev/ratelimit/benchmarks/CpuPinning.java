package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Keeps the server under test and the load apart on the machine's CPUs with
 * {@code taskset}: the server JVM runs on {@code <server>} (started on every
 * CPU as if it had only the server's, see {@link #launch}), and this JVM (the
 * load generator) and any {@code redis-server} it started are moved, every
 * thread, to the other CPUs with {@code taskset -a -cp}. On
 * a two-core machine: the server on CPU 1, the load generator and Redis on
 * CPU 0. Redis goes with the load generator, not with the server, because in
 * production it runs on another machine: its time then neither slows the
 * server down nor counts as the server's CPU time. {@link #NONE} pins nothing.
 *
 * @param serverCpus the server's CPU list as taskset takes it ({@code 1}), or {@code null} for none
 * @param clientCpus the load generator's and Redis' CPU list ({@code 0}), or {@code null} for none
 */
record CpuPinning(String serverCpus, String clientCpus) {

	static final CpuPinning NONE = new CpuPinning(null, null);

	/**
	 * {@code auto}, decided on first use: once this JVM has moved itself to the
	 * client CPUs it sees only those, and would decide again that there is
	 * nothing to pin (a table's note said "not pinned" of a pinned run).
	 */
	private static CpuPinning auto;

	/**
	 * Reads {@code --pin}: {@code auto} (the default) pins the server to the last
	 * CPU and the load to the others when {@code taskset} exists and there are
	 * at least two CPUs, else nothing; {@code none} pins nothing; {@code S/C}
	 * gives both CPU lists, such as {@code 1/0} or {@code 2-3/0-1}.
	 */
	static CpuPinning of(String option) {
		if (option == null || option.equals("auto")) {
			return auto();
		}
		if (option.equals("none")) {
			return NONE;
		}
		String[] parts = option.split("/");
		if (parts.length != 2 || parts[0].isBlank() || parts[1].isBlank()) {
			throw new IllegalArgumentException("--pin takes auto, none or SERVER/CLIENT CPU lists (1/0), got " + option);
		}
		return new CpuPinning(parts[0], parts[1]);
	}

	private static synchronized CpuPinning auto() {
		if (auto == null) {
			int cpus = Runtime.getRuntime().availableProcessors();
			auto = (cpus < 2 || !tasksetWorks()) ? NONE
					: new CpuPinning(Integer.toString(cpus - 1), (cpus == 2) ? "0" : "0-" + (cpus - 2));
		}
		return auto;
	}

	boolean pins() {
		return this.serverCpus != null;
	}

	/**
	 * How a server JVM is launched: {@code taskset -c <server>,<client> java
	 * -XX:ActiveProcessorCount=<server CPUs>}, or plain {@code java}. It starts on
	 * every CPU of the run, then {@link #pinToServer} moves it to its own once it
	 * answers. Pinned from the start, a JVM with eight compiler threads took 23 s and
	 * as many CPU seconds to start on this machine; on two CPUs, 13 s. Nothing else
	 * runs while a server starts, and the option sizes everything the JVM and the
	 * libraries size by the CPU count (GC and compiler threads, event loops, pools)
	 * as for the server's CPUs alone, exactly as a pinned start would.
	 * @param java the {@code java} executable
	 * @return the words before the JVM's own options
	 */
	List<String> launch(String java) {
		if (!pins()) {
			return List.of(java);
		}
		return List.of("taskset", "-c", this.serverCpus + "," + this.clientCpus, java,
				"-XX:ActiveProcessorCount=" + count(this.serverCpus));
	}

	/**
	 * Moves every thread of a server JVM started by {@link #launch} to the
	 * server's CPUs, again until none is left behind: a thread the JVM creates
	 * while {@code taskset} walks the list keeps its creator's CPUs.
	 * @param pid the server's process
	 * @throws IllegalStateException if some thread still runs elsewhere after a few attempts
	 */
	void pinToServer(long pid) {
		if (!pins()) {
			return;
		}
		for (int attempt = 0; attempt < 5; attempt++) {
			taskset("-a", "-cp", this.serverCpus, Long.toString(pid));
			if (allThreadsOn(pid, affinity(pid))) {
				return;
			}
		}
		throw new IllegalStateException("Cannot move every thread of " + pid + " to CPU " + this.serverCpus);
	}

	/** Whether every thread of a process may run on exactly {@code cpus} (as the kernel lists them). */
	private static boolean allThreadsOn(long pid, String cpus) {
		try (var tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
			for (Path task : tasks.toList()) {
				String allowed = Files.readAllLines(task.resolve("status"))
					.stream()
					.filter((line) -> line.startsWith("Cpus_allowed_list:"))
					.map((line) -> line.substring(line.indexOf(':') + 1).trim())
					.findFirst()
					.orElse(cpus);
				if (!allowed.equals(cpus)) {
					return false;
				}
			}
			return true;
		}
		catch (IOException ex) {
			// A thread that ended between the listing and the read: look again.
			return false;
		}
	}

	/** How many CPUs a taskset list names: {@code 1} is 1, {@code 0-2,4} is 4. */
	static int count(String cpus) {
		int count = 0;
		for (String range : cpus.split(",")) {
			int dash = range.indexOf('-');
			count += (dash < 0) ? 1 : Integer.parseInt(range.substring(dash + 1).trim())
					- Integer.parseInt(range.substring(0, dash).trim()) + 1;
		}
		return count;
	}

	/**
	 * Moves every thread of a process to the client CPUs.
	 * @param pid the process
	 * @return the process's CPU list before, to restore with {@link #restore}; {@code null} when nothing was pinned
	 */
	String pinToClient(long pid) {
		if (!pins()) {
			return null;
		}
		String before = affinity(pid);
		taskset("-a", "-cp", this.clientCpus, Long.toString(pid));
		return before;
	}

	/** Gives every thread of a process back its former CPU list. */
	static void restore(long pid, String cpus) {
		if (cpus != null) {
			taskset("-a", "-cp", cpus, Long.toString(pid));
		}
	}

	/** How the run was pinned, for the table's notes. */
	String describe() {
		return pins() ? "server JVM on CPU " + this.serverCpus + " (started on every CPU, pinned once it answers)"
				+ ", load generator and redis-server on CPU " + this.clientCpus + " (taskset)"
				: "not pinned: server, load generator and Redis share the CPUs";
	}

	private static String affinity(long pid) {
		String out = taskset("-pc", Long.toString(pid));
		// "pid 123's current affinity list: 0,1"
		return out.substring(out.lastIndexOf(':') + 1).trim();
	}

	private static boolean tasksetWorks() {
		try {
			affinity(ProcessHandle.current().pid());
			return true;
		}
		catch (IllegalStateException ex) {
			return false;
		}
	}

	private static String taskset(String... arguments) {
		List<String> command = new ArrayList<>();
		command.add("taskset");
		command.addAll(List.of(arguments));
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			String out = new String(process.getInputStream().readAllBytes()).trim();
			if (process.waitFor() != 0) {
				throw new IllegalStateException(String.join(" ", command) + " failed: " + out);
			}
			return out;
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot run " + String.join(" ", command), ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted running " + String.join(" ", command), ex);
		}
	}

}
