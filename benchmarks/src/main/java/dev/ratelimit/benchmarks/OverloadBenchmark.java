package dev.ratelimit.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The sample as shipped, two instances on one Redis, under the load the limiter
 * exists for (issue 27): a saturated server, a brute-force attack, a frozen
 * Redis. Reports the share of decisions that fell to the failure mode, the
 * client-side latency percentiles, the passwords checked in each of 20 trials
 * of 64 parallel wrong logins, and what a 2-second {@code SIGSTOP} of Redis
 * under load lets through and how soon decisions are back on Redis.
 * <p>
 * Both sample JVMs run on the server CPU (CPU 1 of 2), the load generator and
 * {@code redis-server} (in a session of its own) on the other ({@link CpuPinning});
 * {@code --pin none} lets everything share both cores. Run from the repository
 * root after {@code mvn -q -pl benchmarks,sample-app -am package -DskipTests}:
 * {@code java -cp benchmarks/target/benchmarks.jar dev.ratelimit.benchmarks.OverloadBenchmark
 * [--seconds 30] [--clients 64] [--trials 20] [--stall-seconds 2] [--pin auto] [--failure-mode local]
 * [--jar sample-app.jar]}.
 */
public final class OverloadBenchmark {

	private static final String HOST = "127.0.0.1";

	private static final int TIMEOUT_MILLIS = 30_000;

	/** Users and addresses the background load spreads over. */
	private static final int USERS = 1_000;

	private static final int ATTACKERS = 64;

	/** The sample's failed-logins limit. */
	private static final int LOGIN_LIMIT = 5;

	private OverloadBenchmark() {
	}

	public static void main(String[] args) throws Exception {
		Options options = Options.parse(args);
		int seconds = options.integer("seconds", 30);
		int clients = options.integer("clients", 64);
		int trials = options.integer("trials", 20);
		int stallSeconds = options.integer("stall-seconds", 2);
		String failureMode = options.string("failure-mode", null);
		CpuPinning pinning = CpuPinning.of(options.string("pin", "auto"));
		Path jar = SampleAppProcess.locateJar(options.string("jar", null));
		System.out.println(run(jar, pinning, seconds, clients, trials, stallSeconds, failureMode).toMarkdown());
	}

	/**
	 * Runs the whole experiment and returns its report.
	 * @param failureMode the failure mode of failed-logins, or {@code null} for the sample's own
	 */
	static Report run(Path jar, CpuPinning pinning, int seconds, int clients, int trials, int stallSeconds,
			String failureMode) throws Exception {
		List<String> wrapper = Path.of("/usr/bin/setsid").toFile().canExecute() ? List.of("/usr/bin/setsid")
				: List.of();
		try (RedisServerProcess redis = RedisServerProcess.start(wrapper)) {
			pinning.pinToClient(redis.pid());
			pinning.pinToClient(ProcessHandle.current().pid());
			List<String> arguments = new ArrayList<>(List.of("--rate-limit.backend=redis",
					"--spring.data.redis.host=" + HOST, "--spring.data.redis.port=" + redis.port(),
					"--rate-limit.client-ip.trusted-proxies=127.0.0.1", "--logging.level.dev.ratelimit=WARN"));
			if (failureMode != null) {
				arguments.add("--rate-limit.policies.failed-logins.failure-mode=" + failureMode);
			}
			List<String> jvm = List.of("-Xms512m", "-Xmx512m", "-XX:+UseG1GC");
			try (SampleAppProcess first = SampleAppProcess
				.start(pinning, jar, jvm, arguments, "/actuator/health")
				.app();
					SampleAppProcess second = SampleAppProcess
						.start(pinning, jar, jvm, arguments, "/actuator/health")
						.app()) {
				int[] ports = { first.port(), second.port() };
				Report report = new Report(pinning, seconds, clients,
						(failureMode != null) ? failureMode : "as shipped (local)");
				Background load = new Background(ports, clients);
				Counters before;
				Counters after;
				try {
					load.start();
					load.runFor(10, TimeUnit.SECONDS);
					before = Counters.read(ports);
					load.record(true);
					load.runFor(seconds, TimeUnit.SECONDS);
					for (int trial = 0; trial < trials; trial++) {
						report.checked.add(bruteForce(ports, "trial-" + trial + "-" + System.nanoTime()));
					}
					load.record(false);
					after = Counters.read(ports);
					report.stall = stall(redis, ports, stallSeconds);
				}
				finally {
					load.stop();
				}
				report.load(load, before, after);
				return report;
			}
		}
	}

	/**
	 * One trial: 64 wrong passwords for one user at once, half to each instance.
	 * @return how many were checked (401), not refused (429)
	 */
	private static int bruteForce(int[] ports, String user) throws Exception {
		CountDownLatch ready = new CountDownLatch(ATTACKERS);
		CountDownLatch go = new CountDownLatch(1);
		AtomicInteger checked = new AtomicInteger();
		List<Thread> threads = new ArrayList<>();
		for (int i = 0; i < ATTACKERS; i++) {
			int port = ports[i % 2];
			threads.add(start("attacker-" + i, () -> {
				try (HttpConnection connection = new HttpConnection(HOST, port, "/", TIMEOUT_MILLIS)) {
					byte[] request = login(port, user);
					ready.countDown();
					go.await();
					if (connection.send(request) == 401) {
						checked.incrementAndGet();
					}
				}
			}));
		}
		ready.await();
		go.countDown();
		for (Thread thread : threads) {
			thread.join();
		}
		return checked.get();
	}

	/**
	 * Freezes Redis for a while under the background load while attackers try
	 * one user's password on both instances without pause.
	 */
	private static Stall stall(RedisServerProcess redis, int[] ports, int seconds) throws Exception {
		String user = "stall-victim";
		AtomicBoolean attacking = new AtomicBoolean(true);
		AtomicBoolean frozen = new AtomicBoolean(true);
		AtomicLong[] checkedFrozen = { new AtomicLong(), new AtomicLong() };
		AtomicLong checkedInAll = new AtomicLong();
		Statuses whileFrozen = new Statuses();
		List<Thread> attackers = new ArrayList<>();
		signal(redis.pid(), "STOP");
		long frozeAt = System.nanoTime();
		for (int i = 0; i < 32; i++) {
			int which = i % 2;
			attackers.add(start("stall-attacker-" + i, () -> {
				try (HttpConnection connection = new HttpConnection(HOST, ports[which], "/", TIMEOUT_MILLIS)) {
					byte[] request = login(ports[which], user);
					while (attacking.get()) {
						boolean duringFreeze = frozen.get();
						int status = connection.send(request);
						if (duringFreeze) {
							whileFrozen.add(status);
						}
						if (status == 401) {
							checkedInAll.incrementAndGet();
							if (duringFreeze) {
								checkedFrozen[which].incrementAndGet();
							}
						}
					}
				}
			}));
		}
		TimeUnit.NANOSECONDS.sleep(frozeAt + TimeUnit.SECONDS.toNanos(seconds) - System.nanoTime());
		long fallbacksFrozen = Counters.read(ports).fallbacks;
		frozen.set(false);
		signal(redis.pid(), "CONT");
		long thawedAt = System.nanoTime();
		long[] back = new long[2];
		for (int i = 0; i < 2; i++) {
			while (Counters.silent(ports[i])) {
				TimeUnit.MILLISECONDS.sleep(5);
			}
			back[i] = System.nanoTime() - thawedAt;
		}
		long fallbacksAtReturn = Counters.read(ports).fallbacks;
		// One more second of attack on Redis: the user's remaining attempts, if any, are Redis's to give.
		TimeUnit.SECONDS.sleep(1);
		long fallbacksAfter = Counters.read(ports).fallbacks;
		attacking.set(false);
		for (Thread attacker : attackers) {
			attacker.join();
		}
		return new Stall(seconds, checkedFrozen[0].get(), checkedFrozen[1].get(), checkedInAll.get(),
				whileFrozen.toString(), TimeUnit.NANOSECONDS.toMillis(back[0]), TimeUnit.NANOSECONDS.toMillis(back[1]),
				fallbacksAtReturn - fallbacksFrozen, fallbacksAfter - fallbacksAtReturn);
	}

	private static byte[] login(int port, String user) {
		return post(port, "/login", "", "{\"username\":\"" + user + "\",\"password\":\"wrong\"}");
	}

	/** A POST with a JSON body, whole as it goes on the wire. */
	static byte[] post(int port, String path, String headers, String json) {
		byte[] body = json.getBytes(StandardCharsets.UTF_8);
		String head = "POST " + path + " HTTP/1.1\r\nHost: " + HOST + ":" + port
				+ "\r\nAccept: */*\r\nContent-Type: application/json\r\nContent-Length: " + body.length + "\r\n"
				+ headers + "\r\n";
		byte[] request = Arrays.copyOf(head.getBytes(StandardCharsets.US_ASCII), head.length() + body.length);
		System.arraycopy(body, 0, request, head.length(), body.length);
		return request;
	}

	private static void signal(long pid, String signal) {
		try {
			Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start();
			if (kill.waitFor() != 0) {
				throw new IllegalStateException("kill -" + signal + " " + pid + " failed");
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static Thread start(String name, Work work) {
		Thread thread = new Thread(() -> {
			try {
				work.run();
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		}, name);
		thread.setDaemon(true);
		thread.start();
		return thread;
	}

	@FunctionalInterface
	private interface Work {

		void run() throws Exception;

	}

	/**
	 * The sample's traffic from many clients without pause, half to each
	 * instance: agent runs of many users (agent-runs), greetings from many
	 * addresses (the per-ip route rule) and wrong logins of many users
	 * (failed-logins), each client's latencies kept while recording.
	 */
	static final class Background {

		private final int[] ports;

		private final int clients;

		private final AtomicBoolean running = new AtomicBoolean(true);

		private volatile boolean recording;

		private final List<Thread> threads = new ArrayList<>();

		private final List<long[]> latencies = new ArrayList<>();

		private final int[] counts;

		private final AtomicLong requests = new AtomicLong();

		private final Statuses statuses = new Statuses();

		private long recordedNanos;

		private long recordingSince;

		Background(int[] ports, int clients) {
			this.ports = ports;
			this.clients = clients;
			this.counts = new int[clients];
		}

		void start() {
			for (int c = 0; c < this.clients; c++) {
				int client = c;
				this.latencies.add(new long[1 << 16]);
				this.threads.add(OverloadBenchmark.start("client-" + c, () -> run(client)));
			}
		}

		private void run(int client) throws IOException {
			int port = this.ports[client % 2];
			ThreadLocalRandom random = ThreadLocalRandom.current();
			try (HttpConnection connection = new HttpConnection(HOST, port, "/", TIMEOUT_MILLIS)) {
				for (long n = 0; this.running.get(); n++) {
					int user = random.nextInt(USERS);
					byte[] request = switch ((int) (n % 3)) {
						case 0 -> post(port, "/agent/run", "X-User-Id: user-" + user + "\r\n", "{}");
						case 1 -> ("GET /api/hello HTTP/1.1\r\nHost: " + HOST + ":" + port
								+ "\r\nX-Forwarded-For: 10.0." + (user >> 8) + "." + (user & 255) + "\r\n\r\n")
							.getBytes(StandardCharsets.US_ASCII);
						default -> login(port, "user-" + user);
					};
					boolean measured = this.recording;
					long began = System.nanoTime();
					int status = connection.send(request);
					long took = System.nanoTime() - began;
					if (measured) {
						record(client, took, status);
					}
				}
			}
		}

		private void record(int client, long nanos, int status) {
			long[] own = this.latencies.get(client);
			if (this.counts[client] == own.length) {
				own = Arrays.copyOf(own, own.length * 2);
				this.latencies.set(client, own);
			}
			own[this.counts[client]++] = nanos;
			this.requests.incrementAndGet();
			this.statuses.add(status);
		}

		void record(boolean on) {
			if (on) {
				this.recordingSince = System.nanoTime();
			}
			else {
				this.recordedNanos = System.nanoTime() - this.recordingSince;
			}
			this.recording = on;
		}

		void runFor(long amount, TimeUnit unit) throws InterruptedException {
			unit.sleep(amount);
		}

		void stop() throws InterruptedException {
			this.running.set(false);
			for (Thread thread : this.threads) {
				thread.join(TIMEOUT_MILLIS);
			}
		}

		/** Every recorded latency in nanoseconds, sorted. */
		long[] sortedLatencies() {
			int total = 0;
			for (int count : this.counts) {
				total += count;
			}
			long[] all = new long[total];
			int at = 0;
			for (int c = 0; c < this.clients; c++) {
				System.arraycopy(this.latencies.get(c), 0, all, at, this.counts[c]);
				at += this.counts[c];
			}
			Arrays.sort(all);
			return all;
		}

		double perSecond() {
			return this.requests.get() / (this.recordedNanos / 1e9);
		}

		String statuses() {
			return this.statuses.toString();
		}

	}

	/** Responses counted by status code, from many threads. */
	static final class Statuses {

		private final AtomicLong[] counts = new AtomicLong[600];

		Statuses() {
			for (int i = 0; i < this.counts.length; i++) {
				this.counts[i] = new AtomicLong();
			}
		}

		void add(int status) {
			this.counts[Math.max(0, Math.min(status, 599))].incrementAndGet();
		}

		@Override
		public String toString() {
			StringBuilder text = new StringBuilder();
			for (int status = 0; status < this.counts.length; status++) {
				long count = this.counts[status].get();
				if (count > 0) {
					text.append((text.length() > 0) ? ", " : "").append(status).append(": ").append(count);
				}
			}
			return text.toString();
		}

	}

	/**
	 * The limiter's own counters, over both instances: decisions, decisions that
	 * fell to the failure mode, and the store's latency.
	 */
	record Counters(long decisions, long fallbacks, long storeCalls, double storeSeconds, double storeMaxSeconds) {

		private static final Pattern COUNT = Pattern.compile("\"statistic\":\"COUNT\",\"value\":([0-9.E]+)");

		private static final Pattern TOTAL = Pattern.compile("\"statistic\":\"TOTAL_TIME\",\"value\":([0-9.E-]+)");

		private static final Pattern MAX = Pattern.compile("\"statistic\":\"MAX\",\"value\":([0-9.E-]+)");

		private static final Pattern VALUE = Pattern.compile("\"statistic\":\"VALUE\",\"value\":([0-9.E]+)");

		static Counters read(int[] ports) throws IOException {
			long decisions = 0;
			long fallbacks = 0;
			long storeCalls = 0;
			double storeSeconds = 0;
			double storeMax = 0;
			for (int port : ports) {
				decisions += (long) number(metric(port, "rate.limit.decisions"), COUNT);
				fallbacks += (long) number(metric(port, "rate.limit.fallbacks"), COUNT);
				String latency = metric(port, "rate.limit.store.latency");
				storeCalls += (long) number(latency, COUNT);
				storeSeconds += number(latency, TOTAL);
				storeMax = Math.max(storeMax, number(latency, MAX));
			}
			return new Counters(decisions, fallbacks, storeCalls, storeSeconds, storeMax);
		}

		/** Whether the instance's limiter finds Redis silent now. */
		static boolean silent(int port) throws IOException {
			return number(metric(port, "rate.limit.redis.silent"), VALUE) > 0;
		}

		private static String metric(int port, String name) throws IOException {
			try (HttpConnection connection = new HttpConnection(HOST, port, "/actuator/metrics/" + name,
					TIMEOUT_MILLIS)) {
				HttpConnection.Response response = connection.getFully();
				// A meter not registered yet (no fallback so far) answers 404: none counted.
				return (response.status() == 200) ? response.body() : "";
			}
		}

		private static double number(String json, Pattern pattern) {
			Matcher matcher = pattern.matcher(json);
			return matcher.find() ? Double.parseDouble(matcher.group(1)) : 0;
		}

	}

	/**
	 * What the freeze let through and how soon the limiter was back on Redis.
	 */
	record Stall(int seconds, long checkedFirst, long checkedSecond, long checkedInAll, String responses,
			long backFirstMillis,
			long backSecondMillis, long fallbacksUntilBack, long fallbacksAfterBack) {
	}

	/** The figures of one run, as Markdown. */
	static final class Report {

		private final CpuPinning pinning;

		private final int seconds;

		private final int clients;

		private final String failureMode;

		final List<Integer> checked = new ArrayList<>();

		private String load;

		private long decisions;

		private long fallbacks;

		Stall stall;

		Report(CpuPinning pinning, int seconds, int clients, String failureMode) {
			this.pinning = pinning;
			this.seconds = seconds;
			this.clients = clients;
			this.failureMode = failureMode;
		}

		void load(Background background, Counters before, Counters after) {
			long[] sorted = background.sortedLatencies();
			long decisions = after.decisions - before.decisions;
			long fallbacks = after.fallbacks - before.fallbacks;
			this.decisions = decisions;
			this.fallbacks = fallbacks;
			long storeCalls = after.storeCalls - before.storeCalls;
			double storeMean = (storeCalls > 0) ? (after.storeSeconds - before.storeSeconds) / storeCalls : 0;
			this.load = String.format(Locale.ROOT, """
					| decisions | fell to the failure mode | share | requests/s | HTTP p50 | p90 | p99 | p99.9 | max | store mean | store max |
					|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
					| %,d | %,d | %.3f%% | %,.0f | %s | %s | %s | %s | %s | %.1f ms | %.0f ms |

					Responses: %s.
					""", decisions, fallbacks, (decisions > 0) ? 100.0 * fallbacks / decisions : 0,
					background.perSecond(), millis(sorted, 0.5), millis(sorted, 0.9), millis(sorted, 0.99),
					millis(sorted, 0.999), millis(sorted, 1.0), storeMean * 1e3, after.storeMaxSeconds * 1e3,
					background.statuses());
		}

		/** The share of decisions under load that fell to the failure mode, in percent. */
		double fallbackPercent() {
			return (this.decisions > 0) ? 100.0 * this.fallbacks / this.decisions : 0;
		}

		String fallbackCounts() {
			return String.format(Locale.ROOT, "%,d of %,d decisions (%.3f%%)", this.fallbacks, this.decisions,
					fallbackPercent());
		}

		/** The most passwords one trial checked. */
		int worstTrial() {
			return this.checked.stream().mapToInt(Integer::intValue).max().orElse(Integer.MAX_VALUE);
		}

		List<Integer> trials() {
			return this.checked;
		}

		/** The most passwords one instance checked while Redis was frozen. */
		long worstInstanceWhileFrozen() {
			return Math.max(this.stall.checkedFirst, this.stall.checkedSecond);
		}

		/** How long after SIGCONT the later instance was back on Redis. */
		long backMillis() {
			return Math.max(this.stall.backFirstMillis, this.stall.backSecondMillis);
		}

		private static String millis(long[] sorted, double quantile) {
			if (sorted.length == 0) {
				return "-";
			}
			int index = (int) Math.min(sorted.length - 1, Math.ceil(quantile * sorted.length) - 1);
			return String.format(Locale.ROOT, "%.1f ms", sorted[Math.max(0, index)] / 1e6);
		}

		String toMarkdown() {
			int worst = worstTrial();
			return String.format(Locale.ROOT, """
					### Overload: two sample instances on one Redis (%s; failed-logins %s)

					%d clients without pause for %d s and through the trials, half to each instance (agent runs of
					1,000 users, greetings from 1,000 addresses, wrong logins of 1,000 users).

					%s
					Brute force, %d parallel wrong logins for one user per trial, during that load: passwords checked
					%s (at most %d: %s).

					Redis frozen (SIGSTOP) for %d s under the load, 32 attackers on one user's password: checked
					%d and %d on the two instances while frozen (at most %d each: %s), %d in all with the 1 s after
					(responses while frozen: %s);
					decisions back on Redis %d and %d ms after SIGCONT (rate.limit.redis.silent 0 again); %,d calls
					fell to the failure mode between SIGCONT and that, %,d in the second after.
					""", this.pinning.describe(), this.failureMode, this.clients, this.seconds, this.load, ATTACKERS, this.checked,
					LOGIN_LIMIT, (worst <= LOGIN_LIMIT) ? "met" : "missed", this.stall.seconds,
					this.stall.checkedFirst, this.stall.checkedSecond, LOGIN_LIMIT,
					(worstInstanceWhileFrozen() <= LOGIN_LIMIT) ? "met" : "missed",
					this.stall.checkedInAll, this.stall.responses, this.stall.backFirstMillis, this.stall.backSecondMillis,
					this.stall.fallbacksUntilBack, this.stall.fallbacksAfterBack);
		}

	}

}
