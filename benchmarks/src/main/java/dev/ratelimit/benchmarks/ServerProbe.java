package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.management.MBeanServerConnection;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

import com.sun.management.ThreadMXBean;
import com.sun.tools.attach.VirtualMachine;

/**
 * What a server process spent, read from outside it: CPU time from
 * {@code /proc/<pid>/stat} (user plus system, every thread, in clock ticks),
 * bytes its threads allocated (through the JDK's attach API and the target's
 * local JMX agent, {@code ThreadMXBean#getThreadAllocatedBytes}), and the
 * limiter's decision count from the sample app's actuator metrics. Differences
 * of two {@link Sample}s over a measured period, divided by its requests, are
 * the per-request costs the HTTP benchmark reports. Linux only (for
 * {@code /proc}); allocation is {@code NaN} when the attach API is unavailable.
 * <p>
 * The CPU time is also split by what the threads do ({@link #THREAD_GROUPS}),
 * in nanoseconds: the JVM's own threads by their Linux names and
 * {@code /proc/<pid>/task/<tid>/schedstat}, Tomcat's by their Java names and
 * {@code ThreadMXBean#getThreadCpuTime} (their Linux names are cut to 15
 * characters, which leaves a worker and the poller of a 5-digit port alike),
 * and the rest of the process as {@code other}. Under WebFlux the request
 * threads are Reactor Netty's event loops ({@code reactor-http-*}), which also
 * read and write the sockets, so there is no separate I/O group; work moved to
 * Reactor's schedulers ({@code boundedElastic-*}, {@code parallel-*}) is a
 * group of its own. A profiler samples only
 * request threads running Java code; this account says whether a variant's
 * extra CPU is on those threads at all.
 */
final class ServerProbe implements AutoCloseable {

	/** Linux's USER_HZ, the unit of utime and stime; 100 on every common kernel build. */
	private static final double TICKS_PER_SECOND = clockTicks();

	private static final Pattern COUNT = Pattern.compile("\"statistic\"\\s*:\\s*\"COUNT\"\\s*,\\s*\"value\"\\s*:\\s*([0-9.eE+-]+)");

	/** The thread groups of {@link Sample#threadNanos}, in the order of the tables. */
	static final List<String> THREAD_GROUPS = List.of("request threads", "Tomcat I/O", "Reactor schedulers",
			"Lettuce I/O", "GC", "JIT", "VM thread", "other");

	private final long pid;

	/** Java thread names by id: a thread keeps its name, so each is asked for once. */
	private final Map<Long, String> threadNames = new HashMap<>();

	private final int port;

	private JMXConnector jmx;

	private ThreadMXBean threads;

	private boolean attachFailed;

	ServerProbe(long pid, int port) {
		this.pid = pid;
		this.port = port;
	}

	/**
	 * The process's counters at one instant.
	 *
	 * @param cpuNanos user plus system CPU time of every thread so far
	 * @param allocatedBytes per live thread id, bytes allocated so far; empty when unknown
	 * @param decisions the limiter's allowed {@code per-ip} decisions so far (0 before the first, or without limiter)
	 * @param threadNanos CPU nanoseconds so far of each of {@link #THREAD_GROUPS}, live threads only; empty
	 * when unknown
	 */
	record Sample(long cpuNanos, Map<Long, Long> allocatedBytes, long decisions, Map<String, Long> threadNanos) {

		/** Each thread group's CPU nanoseconds since {@code before}; empty when unknown. */
		Map<String, Long> threadNanosSince(Sample before) {
			Map<String, Long> since = new LinkedHashMap<>();
			if (!this.threadNanos.isEmpty() && !before.threadNanos.isEmpty()) {
				this.threadNanos.forEach((group, nanos) -> since.put(group, nanos - before.threadNanos.get(group)));
			}
			return since;
		}

		/** Bytes allocated since {@code before} by the threads alive now; NaN when unknown. */
		double allocatedSince(Sample before) {
			if (this.allocatedBytes.isEmpty()) {
				return Double.NaN;
			}
			long sum = 0;
			for (Map.Entry<Long, Long> e : this.allocatedBytes.entrySet()) {
				// A thread started in between allocated all of its count in the period.
				sum += e.getValue() - before.allocatedBytes.getOrDefault(e.getKey(), 0L);
			}
			return sum;
		}

	}

	Sample sample() {
		return new Sample(cpuNanos(), allocated(), decisions(), threadNanos());
	}

	/**
	 * CPU nanoseconds so far of the live threads, by group; empty when the JVM
	 * cannot be attached to (the Java thread names come from it).
	 */
	private Map<String, Long> threadNanos() {
		ThreadMXBean bean = threads();
		if (bean == null) {
			return Map.of();
		}
		Map<String, Long> groups = new LinkedHashMap<>();
		THREAD_GROUPS.forEach((group) -> groups.put(group, 0L));
		long total = 0;
		Path tasks = Path.of("/proc", Long.toString(this.pid), "task");
		List<Path> listed;
		try (Stream<Path> stream = Files.list(tasks)) {
			listed = stream.toList();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot list the threads of process " + this.pid, ex);
		}
		for (Path task : listed) {
			String name;
			long nanos;
			try {
				name = Files.readString(task.resolve("comm")).strip();
				// The first field: time on a CPU, in nanoseconds.
				String schedstat = Files.readString(task.resolve("schedstat"));
				nanos = Long.parseLong(schedstat.substring(0, schedstat.indexOf(' ')));
			}
			catch (NoSuchFileException ex) {
				continue;
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Cannot read thread " + task, ex);
			}
			total += nanos;
			String group = name.startsWith("GC Thread") || name.startsWith("G1 ") ? "GC"
					: ProcessCpu.isJitThread(name) ? "JIT"
							: name.equals("VM Thread") ? "VM thread" : null;
			if (group != null) {
				groups.merge(group, nanos, Long::sum);
			}
		}
		long[] ids = bean.getAllThreadIds();
		long[] cpu = bean.getThreadCpuTime(ids);
		for (int i = 0; i < ids.length; i++) {
			String name = threadName(bean, ids[i]);
			String group = (name == null || cpu[i] < 0) ? null : javaThreadGroup(name);
			if (group != null) {
				groups.merge(group, cpu[i], Long::sum);
			}
		}
		long grouped = groups.values().stream().mapToLong(Long::longValue).sum();
		groups.put("other", total - grouped);
		return groups;
	}

	/** The group of a thread known by its Java name, or {@code null} for the groups read from Linux. */
	private static String javaThreadGroup(String name) {
		if (name.contains("-exec-") || name.startsWith("reactor-http-")) {
			return "request threads";
		}
		if (name.endsWith("-Poller") || name.endsWith("-Acceptor")) {
			return "Tomcat I/O";
		}
		if (name.startsWith("boundedElastic-") || name.startsWith("parallel-")) {
			return "Reactor schedulers";
		}
		return name.startsWith("lettuce-") ? "Lettuce I/O" : null;
	}

	private String threadName(ThreadMXBean bean, long id) {
		String name = this.threadNames.get(id);
		if (name == null) {
			ThreadInfo info = bean.getThreadInfo(id);
			if (info == null) {
				return null;
			}
			name = info.getThreadName();
			this.threadNames.put(id, name);
		}
		return name;
	}

	/** User plus system time of the process, from {@code /proc/<pid>/stat}, in nanoseconds. */
	long cpuNanos() {
		try {
			String stat = Files.readString(Path.of("/proc", Long.toString(this.pid), "stat"));
			// The command name is in parentheses and may hold spaces: fields count from after it.
			String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
			long ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
			return (long) (ticks * 1e9 / TICKS_PER_SECOND);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read the CPU time of process " + this.pid
					+ " (the HTTP benchmark's CPU figures need Linux's /proc)", ex);
		}
	}

	private Map<Long, Long> allocated() {
		ThreadMXBean bean = threads();
		if (bean == null) {
			return Map.of();
		}
		long[] ids = bean.getAllThreadIds();
		long[] bytes = bean.getThreadAllocatedBytes(ids);
		Map<Long, Long> result = new HashMap<>();
		for (int i = 0; i < ids.length; i++) {
			if (bytes[i] >= 0) {
				result.put(ids[i], bytes[i]);
			}
		}
		return result;
	}

	private ThreadMXBean threads() {
		if (this.threads == null && !this.attachFailed) {
			try {
				VirtualMachine vm = VirtualMachine.attach(Long.toString(this.pid));
				String address;
				try {
					address = vm.startLocalManagementAgent();
				}
				finally {
					vm.detach();
				}
				this.jmx = JMXConnectorFactory.connect(new JMXServiceURL(address));
				MBeanServerConnection connection = this.jmx.getMBeanServerConnection();
				this.threads = ManagementFactory.newPlatformMXBeanProxy(connection,
						ManagementFactory.THREAD_MXBEAN_NAME, ThreadMXBean.class);
			}
			catch (Exception | LinkageError ex) {
				this.attachFailed = true;
				System.out.println("  (no allocation figures: cannot attach to process " + this.pid + ": " + ex + ")");
			}
		}
		return this.threads;
	}

	/**
	 * CPU milliseconds the JIT compiler threads have used so far: the warm-up goes
	 * on until this stops growing. Their CPU time rather than the JVM's total
	 * compilation time, which counts a compilation only once it is finished: a
	 * long C2 compilation still running looks like a settled JIT there.
	 */
	long compileMillis() {
		return Math.round(ProcessCpu.of(this.pid).jitSeconds() * 1000);
	}

	/** The allowed decisions of {@code per-ip} so far, from {@code /actuator/metrics}; 0 when there is no such meter. */
	long decisions() {
		String path = "/actuator/metrics/" + "rate.limit.decisions" + "?tag=policy:per-ip&tag=outcome:allowed";
		try (HttpConnection connection = new HttpConnection("127.0.0.1", this.port, path, 5_000)) {
			HttpConnection.Response response = connection.getFully();
			if (response.status() == 404) {
				return 0;
			}
			Matcher count = COUNT.matcher(response.body());
			if (response.status() != 200 || !count.find()) {
				throw new IllegalStateException("Unexpected answer of " + path + ": " + response.status() + " "
						+ response.body());
			}
			return (long) Double.parseDouble(count.group(1));
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read " + path, ex);
		}
	}

	@Override
	public void close() {
		if (this.jmx != null) {
			try {
				this.jmx.close();
			}
			catch (IOException ex) {
				// the server is going away anyway
			}
		}
	}

	private static double clockTicks() {
		try {
			Process getconf = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
			String out = new String(getconf.getInputStream().readAllBytes()).trim();
			return (getconf.waitFor() == 0) ? Double.parseDouble(out) : 100;
		}
		catch (IOException | NumberFormatException ex) {
			return 100;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return 100;
		}
	}

}
