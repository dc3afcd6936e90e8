package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
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
 * What a server process spent, read from outside it: CPU time from each
 * thread's {@code /proc/<pid>/task/<tid>/schedstat} (time on a CPU, user plus
 * system, in nanoseconds; {@code /proc/<pid>/stat} counts in 10 ms clock ticks,
 * which at 3,000 requests/s for 3 s is 1.1 µs per request),
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
	 * @param taskNanos per live thread id (Linux's), CPU nanoseconds so far
	 * @param allocatedBytes per live thread id, bytes allocated so far; empty when unknown
	 * @param decisions the limiter's allowed {@code per-ip} decisions so far (0 before the first, or without limiter)
	 * @param threadNanos CPU nanoseconds so far of each of {@link #THREAD_GROUPS}, live threads only; empty
	 * when unknown
	 */
	record Sample(Map<Long, Long> taskNanos, Map<Long, Long> allocatedBytes, long decisions,
			Map<String, Long> threadNanos) {

		/**
		 * CPU nanoseconds the process used since {@code before}: a thread started
		 * in between counts whole, one that ended in between loses only what it
		 * used after {@code before} (threads of a server under load seldom end).
		 */
		long cpuNanosSince(Sample before) {
			return sinceBefore(this.taskNanos, before.taskNanos);
		}

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
			return sinceBefore(this.allocatedBytes, before.allocatedBytes);
		}

	}

	/** Sums each thread's count now minus its count before (0 for a thread started in between). */
	private static long sinceBefore(Map<Long, Long> now, Map<Long, Long> before) {
		long sum = 0;
		for (Map.Entry<Long, Long> e : now.entrySet()) {
			sum += e.getValue() - before.getOrDefault(e.getKey(), 0L);
		}
		return sum;
	}

	/**
	 * Reads the counters. Reading the allocation and the Java threads' CPU
	 * (JMX) and the decisions (an actuator request) costs the server CPU, which a measured period must not
	 * count: read its CPU last at its start and first at its end.
	 * @param cpuFirst whether to read the CPU before the rest (at a period's end)
	 * @return the counters
	 */
	Sample sample(boolean cpuFirst) {
		List<Task> tasks = cpuFirst ? tasks() : null;
		Map<Long, Long> allocated = allocated();
		Map<String, Long> javaGroups = javaThreadNanos();
		long decisions = decisions();
		if (!cpuFirst) {
			tasks = tasks();
		}
		return new Sample(nanosByThread(tasks), allocated, decisions, threadNanos(tasks, javaGroups));
	}

	/**
	 * CPU nanoseconds the process's live threads have used so far, by thread:
	 * two readings' {@link #cpuNanosBetween difference} is the process's CPU in between.
	 * @return nanoseconds by Linux thread id
	 */
	Map<Long, Long> cpuNanos() {
		return nanosByThread(tasks());
	}

	private static Map<Long, Long> nanosByThread(List<Task> tasks) {
		Map<Long, Long> nanos = new HashMap<>();
		tasks.forEach((task) -> nanos.put(task.id(), task.nanos()));
		return nanos;
	}

	/**
	 * CPU nanoseconds used between two {@link #cpuNanos()} readings.
	 * @param before the earlier reading
	 * @param after the later one
	 * @return the nanoseconds, as {@link Sample#cpuNanosSince} counts them
	 */
	static long cpuNanosBetween(Map<Long, Long> before, Map<Long, Long> after) {
		return sinceBefore(after, before);
	}

	/** One live thread: its Linux id and name ({@code comm}) and its time on a CPU so far. */
	private record Task(long id, String name, long nanos) {
	}

	/** The process's live threads, each read from {@code /proc/<pid>/task/<tid>/}. */
	private List<Task> tasks() {
		Path tasks = Path.of("/proc", Long.toString(this.pid), "task");
		List<Path> listed;
		try (Stream<Path> stream = Files.list(tasks)) {
			listed = stream.toList();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot list the threads of process " + this.pid
					+ " (the HTTP benchmark's CPU figures need Linux's /proc)", ex);
		}
		List<Task> read = new ArrayList<>(listed.size());
		for (Path task : listed) {
			try {
				String name = Files.readString(task.resolve("comm")).strip();
				// The first field: time on a CPU, in nanoseconds.
				String schedstat = Files.readString(task.resolve("schedstat"));
				read.add(new Task(Long.parseLong(task.getFileName().toString()), name,
						Long.parseLong(schedstat.substring(0, schedstat.indexOf(' ')))));
			}
			catch (NoSuchFileException ex) {
				// The thread ended while the list was read.
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Cannot read thread " + task, ex);
			}
		}
		return read;
	}

	/**
	 * CPU nanoseconds so far of the live threads, by group; empty when the JVM
	 * cannot be attached to (the Java thread names come from it).
	 * @param tasks the threads read from Linux
	 * @param javaGroups the groups known by Java thread names ({@link #javaThreadNanos})
	 */
	private Map<String, Long> threadNanos(List<Task> tasks, Map<String, Long> javaGroups) {
		if (javaGroups == null) {
			return Map.of();
		}
		Map<String, Long> groups = new LinkedHashMap<>();
		THREAD_GROUPS.forEach((group) -> groups.put(group, 0L));
		javaGroups.forEach((group, nanos) -> groups.merge(group, nanos, Long::sum));
		long total = 0;
		for (Task task : tasks) {
			total += task.nanos();
			String name = task.name();
			String group = name.startsWith("GC Thread") || name.startsWith("G1 ") ? "GC"
					: ProcessCpu.isJitThread(name) ? "JIT"
							: name.equals("VM Thread") ? "VM thread" : null;
			if (group != null) {
				groups.merge(group, task.nanos(), Long::sum);
			}
		}
		long grouped = groups.values().stream().mapToLong(Long::longValue).sum();
		groups.put("other", total - grouped);
		return groups;
	}

	/**
	 * CPU nanoseconds so far of the groups known by Java thread names, through
	 * JMX (a call that costs the server CPU, so read outside a measured period).
	 * @return nanoseconds by group, or {@code null} when the JVM cannot be attached to
	 */
	private Map<String, Long> javaThreadNanos() {
		ThreadMXBean bean = threads();
		if (bean == null) {
			return null;
		}
		Map<String, Long> groups = new HashMap<>();
		long[] ids = bean.getAllThreadIds();
		long[] cpu = bean.getThreadCpuTime(ids);
		for (int i = 0; i < ids.length; i++) {
			String name = threadName(bean, ids[i]);
			String group = (name == null || cpu[i] < 0) ? null : javaThreadGroup(name);
			if (group != null) {
				groups.merge(group, cpu[i], Long::sum);
			}
		}
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

}
