package dev.ratelimit.virtualthreads;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.thread.Threading;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.ratelimit.Concurrency;
import dev.ratelimit.CostBudget;
import dev.ratelimit.LimitRegistry;
import dev.ratelimit.RateLimited;
import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.BudgetExceededException;
import dev.ratelimit.budget.BudgetMeter;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.concurrency.ConcurrencyLimitExceededException;
import dev.ratelimit.concurrency.ConcurrencyLimiters;
import dev.ratelimit.concurrency.DistributedConcurrencyLimiter;
import dev.ratelimit.concurrency.LocalConcurrencyLimiter;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.LimitRequest;
import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.support.RedisServerFixture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Every kind of limit under 10,000 virtual threads at once, in an application
 * with {@code spring.threads.virtual.enabled=true}, in memory and on a real
 * {@code redis-server}: a rate limit, two budgets reserved together and
 * settled below their estimate, a streaming budget that extends its
 * reservation, a local cap and a distributed one whose callers wait their
 * turn, a distributed cap that refuses at once, and a rate limit in wait
 * mode. The threads are all started before any of them calls, then let go
 * together.
 * <p>
 * Each backend has two bursts, on keys of their own: a first one, cold, whose
 * pinned threads are reported only (its first calls load classes, and a
 * virtual thread that waits for another to load or initialize a class is
 * pinned on every JDK), then the run. A JFR recording of the run, with
 * {@code jdk.VirtualThreadPinned} at a threshold of 0, must show no pinned
 * virtual thread with a frame of the starter's code on its stack; a thread
 * pinned on purpose (parking in a class initializer) shows that the recording
 * would see one. Every thread must end within {@link #BOUND} (no carrier
 * stuck), no virtual thread may fail to be scheduled
 * ({@code jdk.VirtualThreadSubmitFailed}), and the counts are exact: the rate
 * limit admits its capacity, the budgets are charged exactly what was settled
 * and hold no reservation afterwards, no cap ever has more calls in flight
 * than its permits and every permit comes back, and the paced calls start no
 * sooner than the rate allows. The recordings are kept in {@code target/jfr}.
 * <p>
 * Virtual threads need JDK 21 or later; the sources compile against Java
 * 17's API, so they are created by reflection. The build runs this class in
 * a surefire execution of its own on the JDK that
 * {@code -Dvirtual-threads.jvm} names (see the module's pom); on an older JDK
 * it is skipped.
 */
class VirtualThreadsTests {

	/** How many virtual threads run at once. */
	static final int THREADS = 10_000;

	/** The key of every limit in the run. */
	static final String RUN = "run";

	/** The key of every limit in the first burst, cold, before the run. */
	static final String COLD = "cold";

	/** The longest any thread may take, from the start to its end. */
	static final Duration BOUND = Duration.ofSeconds(120);

	/** The starter's code, on a JFR stack: this package is the test's. */
	private static final String STARTER = "dev.ratelimit.";

	private static final String TEST_PACKAGE = VirtualThreadsTests.class.getPackageName() + ".";

	static final int RATE_CAPACITY = 1000;

	static final int TIGHT_BUDGET_CALLS = 500;

	static final int LOCAL_PERMITS = 8;

	static final int SHARED_PERMITS = 16;

	static final int QUEUED_PERMITS = 32;

	static final int PACED_CAPACITY = 100;

	static final int PACED_PER_SECOND = 1000;

	@BeforeEach
	void needsVirtualThreads() {
		// The build runs this class only on a JDK 21+ (its own surefire execution); forced onto an older JVM it
		// fails, saying how to run it, rather than pass without having run.
		assertThat(Runtime.version().feature())
			.as("VirtualThreadsTests needs JDK 21+ (virtual threads); this JVM is " + Runtime.version()
					+ ". Run it with -Dvirtual-threads.jvm=/path/to/jdk-21+/bin/java")
			.isGreaterThanOrEqualTo(21);
	}

	@Test
	void everyKindOfLimitInMemory() {
		run("memory", List.of("rate-limit.backend=memory"), List.of(Kind.RATE, Kind.BUDGETS, Kind.STREAM,
				Kind.LOCAL_CAP, Kind.PACED), PinnedInMemoryRun::touch, PinnedOnPurpose.MEMORY_RUN);
	}

	@Test
	void everyKindOfLimitOnRedis() {
		// Started here, not with the class: on a JDK without virtual threads the class starts nothing.
		RedisServerFixture redis = RedisServerFixture.shared();
		redis.flushAll();
		run("redis",
				List.of("rate-limit.backend=redis", "spring.data.redis.host=127.0.0.1",
						"spring.data.redis.port=" + redis.port(), "rate-limit.redis.connect-timeout=10s",
						// 10,000 calls at once queue on one connection, on two cores shared with redis-server: a
						// cold burst has passed the default 2 s, and this test is about threads, not latency.
						"rate-limit.redis.busy-timeout=10s",
						// A decision Redis could not make would fall back: refused instead, and counted as a failure.
						"rate-limit.policies.burst.failure-mode=closed", "rate-limit.policies.paced.failure-mode=closed",
						"rate-limit.budgets.tight.failure-mode=closed", "rate-limit.budgets.wide.failure-mode=closed",
						"rate-limit.budgets.stream.failure-mode=closed",
						"rate-limit.concurrency.shared.failure-mode=closed",
						"rate-limit.concurrency.queued.failure-mode=closed",
						"rate-limit.concurrency.shared.permits=" + SHARED_PERMITS,
						"rate-limit.concurrency.shared.scope=distributed",
						"rate-limit.concurrency.queued.permits=" + QUEUED_PERMITS,
						"rate-limit.concurrency.queued.scope=distributed",
						"rate-limit.concurrency.queued.max-wait=100s"),
				List.of(Kind.RATE, Kind.BUDGETS, Kind.STREAM, Kind.LOCAL_CAP, Kind.SHARED_CAP, Kind.QUEUED_CAP,
						Kind.PACED),
				PinnedInRedisRun::touch, PinnedOnPurpose.REDIS_RUN);
	}

	private void run(String backend, List<String> backendProperties, List<Kind> kinds, Runnable pinning,
			CountDownLatch unpin) {
		List<String> properties = new ArrayList<>(List.of("spring.main.banner-mode=off",
				"spring.threads.virtual.enabled=true", "rate-limit.policies.burst.capacity=" + RATE_CAPACITY,
				"rate-limit.policies.burst.refill=1/1h", "rate-limit.policies.paced.capacity=" + PACED_CAPACITY,
				"rate-limit.policies.paced.refill=" + PACED_PER_SECOND + "/1s",
				"rate-limit.policies.paced.max-wait=100s",
				"rate-limit.budgets.tight.amount=" + TIGHT_BUDGET_CALLS * 0.01,
				"rate-limit.budgets.wide.amount=1000.00", "rate-limit.budgets.stream.amount=1000.00",
				"rate-limit.budgets.stream.on-overrun=extend", "rate-limit.concurrency.local.permits=" + LOCAL_PERMITS,
				"rate-limit.concurrency.local.max-wait=100s"));
		properties.addAll(backendProperties);
		List<Class<?>> sources = new ArrayList<>(List.of(App.class));
		if (kinds.contains(Kind.SHARED_CAP)) {
			sources.add(DistributedApp.class);
		}
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(sources.toArray(Class<?>[]::new))
			.web(WebApplicationType.NONE)
			.properties(properties.toArray(String[]::new))
			.run()) {
			assertThat(Threading.VIRTUAL.isActive(context.getEnvironment())).isTrue();
			if (backend.equals("redis")) {
				awaitRedis(context);
			}
			// A first burst, cold, on keys of its own: the first calls load classes, and a virtual thread that waits
			// for another to load or initialize a class is pinned, on every JDK (JEP 491 leaves class loading
			// pinned). Its pins are reported, not held against the starter; nor are its failures, if any: a cold
			// JVM may be slow enough for Redis calls to pass the busy timeout, and their failure modes apply.
			Tallies coldTallies = new Tallies(kinds, THREADS);
			Pins coldPins;
			Run cold;
			try (Recording recording = pinRecording()) {
				recording.start();
				cold = runAtOnce(context, kinds, coldTallies, COLD);
				coldPins = Pins.read(dump(recording, backend + "-cold"));
			}
			System.out.println(summary(backend + " (first burst, cold)", cold, coldTallies, coldPins, null));

			Tallies tallies = new Tallies(kinds, THREADS);
			Pins pins;
			Run result;
			try (Recording recording = pinRecording()) {
				recording.start();
				result = runAtOnce(context, kinds, tallies, RUN);
				pinOnPurpose(pinning, unpin);
				pins = Pins.read(dump(recording, backend));
			}
			Leftovers leftovers = Leftovers.of(context, kinds);
			System.out.println(summary(backend, result, tallies, pins, leftovers));
			assertThat(result.failures()).as("calls that failed other than by a refusal").isEmpty();
			assertThat(result.unfinished()).as("threads still running %s after the start", BOUND).isZero();
			assertThat(pins.starters()).as("pinned virtual threads with the starter's code on their stack")
				.isEmpty();
			assertThat(pins.onPurpose()).as("the thread pinned on purpose: the recording sees pins").isPositive();
			assertThat(pins.submitFailed()).as("virtual threads that could not be scheduled").isZero();
			assertExact(tallies, leftovers, result);
		}
	}

	/** Records every pinned virtual thread, however briefly, with its stack; and every one not scheduled. */
	private static Recording pinRecording() {
		Recording recording = new Recording();
		recording.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
		recording.enable("jdk.VirtualThreadSubmitFailed").withStackTrace();
		return recording;
	}

	/** Stops a recording and keeps it in {@code target/jfr} for a look with {@code jfr print}. */
	private static Path dump(Recording recording, String name) {
		recording.stop();
		Path dump = Path.of("target", "jfr", "virtual-threads-" + name + ".jfr");
		try {
			Files.createDirectories(dump.getParent());
			recording.dump(dump);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return dump;
	}

	/** Runs the probe until Redis decides it: the limiter connects in the background. */
	private static void awaitRedis(ConfigurableApplicationContext context) {
		RateLimiter limiter = context.getBean(RateLimiter.class);
		RateLimitPolicy probe = RateLimitPolicy.builder("probe")
			.capacity(1000)
			.refill("1/1s")
			.failureMode(FailureMode.OPEN)
			.build();
		await().atMost(Duration.ofSeconds(20))
			.until(() -> !limiter.acquire(List.of(new LimitRequest(probe, "k", 1))).decisions().isEmpty());
	}

	/**
	 * Starts every thread, waits until all of them are parked at the gate, lets
	 * them go, and waits for them to end, at most {@link #BOUND}.
	 */
	private Run runAtOnce(ConfigurableApplicationContext context, List<Kind> kinds, Tallies tallies, String run) {
		Services services = context.getBean(Services.class);
		DistributedServices distributed = kinds.contains(Kind.SHARED_CAP) ? context.getBean(DistributedServices.class)
				: null;
		ThreadFactory factory = virtualThreads("limited-");
		int count = tallies.threads;
		CountDownLatch ready = new CountDownLatch(count);
		CountDownLatch go = new CountDownLatch(1);
		Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
		AtomicLong lastEnd = new AtomicLong();
		List<Thread> threads = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			Kind kind = kinds.get(i % kinds.size());
			Tally tally = tallies.of(kind);
			Runnable call = kind.call(services, distributed, run, tally);
			Thread thread = factory.newThread(() -> {
				ready.countDown();
				try {
					go.await();
					call.run();
					tally.admitted.incrementAndGet();
				}
				catch (RateLimitExceededException | BudgetExceededException | ConcurrencyLimitExceededException ex) {
					tally.refused.incrementAndGet();
				}
				catch (Throwable ex) {
					failures.add(ex);
				}
				finally {
					lastEnd.accumulateAndGet(System.nanoTime(), Math::max);
				}
			});
			threads.add(thread);
		}
		assertThat(isVirtual(threads.get(0))).isTrue();
		threads.forEach(Thread::start);
		try {
			assertThat(ready.await(BOUND.toSeconds(), TimeUnit.SECONDS)).as("every thread at the gate").isTrue();
			long start = System.nanoTime();
			tallies.start = start;
			go.countDown();
			long deadline = start + BOUND.toNanos();
			int unfinished = 0;
			for (Thread thread : threads) {
				long left = deadline - System.nanoTime();
				if (left > 0) {
					thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
				}
				if (thread.isAlive()) {
					unfinished++;
				}
			}
			return new Run(count, Duration.ofNanos(lastEnd.get() - start), unfinished, List.copyOf(failures));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Pins a virtual thread: it initializes a class whose initializer parks
	 * until let go.
	 */
	private void pinOnPurpose(Runnable pinning, CountDownLatch unpin) {
		Thread pinned = virtualThreads("pinned-on-purpose-").newThread(pinning);
		pinned.start();
		try {
			// Parked in the class initializer: pinned to its carrier until let go.
			await().atMost(Duration.ofSeconds(10)).until(() -> pinned.getState() == Thread.State.WAITING);
			unpin.countDown();
			pinned.join(TimeUnit.SECONDS.toMillis(10));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		assertThat(pinned.isAlive()).isFalse();
	}

	private static void assertExact(Tallies tallies, Leftovers leftovers, Run run) {
		for (Map.Entry<Kind, Tally> entry : tallies.byKind.entrySet()) {
			Tally tally = entry.getValue();
			assertThat(tally.admitted.get() + tally.refused.get()).as("%s: every call decided", entry.getKey())
				.isEqualTo(tally.calls);
		}
		Tally rate = tallies.of(Kind.RATE);
		assertThat(rate.admitted.get()).as("rate limit: its capacity admitted").isEqualTo(RATE_CAPACITY);
		Tally budgets = tallies.of(Kind.BUDGETS);
		assertThat(budgets.admitted.get()).as("tight budget: exactly the calls it has room for")
			.isEqualTo(TIGHT_BUDGET_CALLS);
		assertThat(leftovers.tight().spentMicros()).as("tight budget spent").containsExactly(TIGHT_BUDGET_CALLS * 10_000L);
		assertThat(leftovers.wide().spentMicros()).as("wide budget: charged the actual cost, not the estimate")
			.containsExactly(budgets.admitted.get() * 10_000L);
		assertThat(leftovers.tight().reservedMicros()).as("tight budget reserved afterwards").isZero();
		assertThat(leftovers.wide().reservedMicros()).as("wide budget reserved afterwards").isZero();
		Tally stream = tallies.of(Kind.STREAM);
		assertThat(stream.admitted.get()).as("streaming budget: every call extended").isEqualTo(stream.calls);
		assertThat(leftovers.stream().spentMicros()).as("streaming budget: charged what was reported")
			.containsExactly(stream.calls * 30_000L);
		assertThat(leftovers.stream().reservedMicros()).as("streaming budget reserved afterwards").isZero();
		Tally local = tallies.of(Kind.LOCAL_CAP);
		assertThat(local.admitted.get()).as("local cap: every caller waited its turn").isEqualTo(local.calls);
		assertThat(local.maxInFlight.get()).as("local cap: in flight at most").isBetween(1, LOCAL_PERMITS);
		assertThat(leftovers.localInUse()).as("local cap: permits held afterwards").isZero();
		Tally paced = tallies.of(Kind.PACED);
		assertThat(paced.admitted.get()).as("wait mode: every caller waited its turn").isEqualTo(paced.calls);
		long[] starts = paced.startedAt.stream().mapToLong(Long::longValue).sorted().toArray();
		for (int k = 0; k < starts.length; k++) {
			// The (k+1)-th call to start took a token that was there by then: the capacity, or refilled since.
			long earliest = tallies.start
					+ Math.max(0, (k + 1 - PACED_CAPACITY)) * TimeUnit.SECONDS.toNanos(1) / PACED_PER_SECOND;
			assertThat(starts[k]).as("paced call %d starts no sooner than the rate allows", k + 1)
				.isGreaterThanOrEqualTo(earliest - TimeUnit.MILLISECONDS.toNanos(5));
		}
		if (tallies.byKind.containsKey(Kind.SHARED_CAP)) {
			Tally shared = tallies.of(Kind.SHARED_CAP);
			assertThat(shared.admitted.get()).as("distributed cap: some callers admitted").isPositive();
			assertThat(shared.maxInFlight.get()).as("distributed cap: in flight at most").isBetween(1,
					SHARED_PERMITS);
			Tally queued = tallies.of(Kind.QUEUED_CAP);
			assertThat(queued.admitted.get()).as("distributed cap in wait mode: every caller waited its turn")
				.isEqualTo(queued.calls);
			assertThat(queued.maxInFlight.get()).as("distributed cap in wait mode: in flight at most").isBetween(1,
					QUEUED_PERMITS);
			assertThat(leftovers.sharedInUse()).as("distributed cap: permits held on Redis afterwards").isZero();
			assertThat(leftovers.queuedInUse()).as("distributed cap in wait mode: permits held on Redis afterwards")
				.isZero();
		}
		assertThat(leftovers.inFlight()).as("calls in flight per cap, as the limiters count them")
			.allSatisfy((cap, count) -> assertThat(count).as(cap).isZero());
		assertThat(run.took()).isLessThan(BOUND);
	}

	private static String summary(String backend, Run run, Tallies tallies, Pins pins,
			@Nullable Leftovers leftovers) {
		StringBuilder summary = new StringBuilder();
		summary.append(String.format("%nVirtual threads on %s, Java %s: %d threads at once, all ended in %d ms, "
				+ "%d unfinished, %d failed%n", backend, Runtime.version(), run.threads(), run.took().toMillis(),
				run.unfinished(), run.failures().size()));
		tallies.byKind.forEach((kind, tally) -> summary.append(String.format("  %-10s %5d calls: %5d admitted, "
				+ "%5d refused, most in flight %d%n", kind, tally.calls, tally.admitted.get(), tally.refused.get(),
				tally.maxInFlight.get())));
		if (leftovers != null) {
			summary.append(String.format("  budgets afterwards: tight %s, wide %s, stream %s%n", leftovers.tight(),
					leftovers.wide(), leftovers.stream()));
			summary.append(String.format("  permits held afterwards: local %d, distributed %s, %s; in flight %s%n",
					leftovers.localInUse(), leftovers.sharedInUse(), leftovers.queuedInUse(), leftovers.inFlight()));
		}
		summary.append(String.format("  JFR: %d jdk.VirtualThreadPinned events (%d with the starter's code, %d the "
				+ "one pinned on purpose, %d with a truncated stack, longest %d us), %d "
				+ "jdk.VirtualThreadSubmitFailed%n", pins.total(), pins.starters().size(), pins.onPurpose(),
				pins.truncated(), pins.longest().toNanos() / 1000, pins.submitFailed()));
		pins.byWhom().forEach((whom, count) -> summary.append(String.format("    %5d pinned in %s%n", count, whom)));
		run.failures().stream().limit(5).forEach((failure) -> summary.append("  failure: ").append(failure)
			.append(System.lineSeparator()));
		return summary.toString();
	}

	/** Creates virtual threads through Java 21's API, which the Java 17 sources cannot name. */
	private static ThreadFactory virtualThreads(String prefix) {
		try {
			Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
			Class<?> ofVirtual = Class.forName("java.lang.Thread$Builder$OfVirtual");
			builder = ofVirtual.getMethod("name", String.class, long.class).invoke(builder, prefix, 0L);
			return (ThreadFactory) ofVirtual.getMethod("factory").invoke(builder);
		}
		catch (ReflectiveOperationException ex) {
			throw new IllegalStateException("No virtual threads on Java " + Runtime.version(), ex);
		}
	}

	private static boolean isVirtual(Thread thread) {
		try {
			return (boolean) Thread.class.getMethod("isVirtual").invoke(thread);
		}
		catch (ReflectiveOperationException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/** What the threads of one run came to. */
	record Run(int threads, Duration took, int unfinished, List<Throwable> failures) {
	}

	/** The kinds of limit, each called by every n-th thread. */
	enum Kind {

		RATE, BUDGETS, STREAM, LOCAL_CAP, SHARED_CAP, QUEUED_CAP, PACED;

		Runnable call(Services services, DistributedServices distributed, String run, Tally tally) {
			return switch (this) {
				case RATE -> () -> services.burst(run);
				case BUDGETS -> () -> services.spend(run);
				case STREAM -> () -> services.stream(run);
				case LOCAL_CAP -> () -> services.local(run, tally);
				case SHARED_CAP -> () -> distributed.shared(run, tally);
				case QUEUED_CAP -> () -> distributed.queued(run, tally);
				case PACED -> () -> services.paced(run, tally);
			};
		}

	}

	/** The calls of one kind. */
	static final class Tally {

		final int calls;

		final AtomicInteger admitted = new AtomicInteger();

		final AtomicInteger refused = new AtomicInteger();

		final AtomicInteger inFlight = new AtomicInteger();

		final AtomicInteger maxInFlight = new AtomicInteger();

		final Queue<Long> startedAt = new ConcurrentLinkedQueue<>();

		Tally(int calls) {
			this.calls = calls;
		}

		/** Runs a call's body as one in flight, letting the other threads run meanwhile. */
		void inFlight() {
			this.maxInFlight.accumulateAndGet(this.inFlight.incrementAndGet(), Math::max);
			try {
				// Held across a yield: the other virtual threads on the carrier run while the permit is out.
				Thread.yield();
			}
			finally {
				this.inFlight.decrementAndGet();
			}
		}

	}

	/** The tallies of a run, by kind. */
	static final class Tallies {

		final Map<Kind, Tally> byKind = new TreeMap<>();

		final int threads;

		/** When the threads were let go, in {@link System#nanoTime()}. */
		volatile long start;

		Tallies(List<Kind> kinds, int threads) {
			this.threads = threads;
			for (int i = 0; i < kinds.size(); i++) {
				int calls = threads / kinds.size() + ((i < threads % kinds.size()) ? 1 : 0);
				this.byKind.put(kinds.get(i), new Tally(calls));
			}
		}

		Tally of(Kind kind) {
			Tally tally = this.byKind.get(kind);
			assertThat(tally).as(kind.name()).isNotNull();
			return tally;
		}

	}

	/** What the limits hold once every thread ended. */
	record Leftovers(BudgetDecision tight, BudgetDecision wide, BudgetDecision stream, int localInUse,
			Integer sharedInUse, Integer queuedInUse, Map<String, Integer> inFlight) {

		static Leftovers of(ConfigurableApplicationContext context, Collection<Kind> kinds) {
			LimitRegistry registry = context.getBean(LimitRegistry.class);
			CostBudgets budgets = context.getBean(CostBudgets.class);
			ConcurrencyLimiters caps = context.getBean(ConcurrencyLimiters.class);
			int local = context.getBean(LocalConcurrencyLimiter.class)
				.inUse(registry.concurrency().find("local").orElseThrow(), RUN);
			Integer shared = null;
			Integer queued = null;
			Map<String, Integer> inFlight = new TreeMap<>();
			for (String cap : List.of("local", "shared", "queued")) {
				if (registry.concurrency().find(cap).isPresent()) {
					inFlight.put(cap, caps.inFlight(cap));
				}
			}
			if (kinds.contains(Kind.SHARED_CAP)) {
				DistributedConcurrencyLimiter distributed = context.getBean(DistributedConcurrencyLimiter.class);
				shared = distributed.inUse(registry.concurrency().find("shared").orElseThrow(), RUN);
				queued = distributed.inUse(registry.concurrency().find("queued").orElseThrow(), RUN);
			}
			return new Leftovers(remaining(budgets, registry, "tight"), remaining(budgets, registry, "wide"),
					remaining(budgets, registry, "stream"), local, shared, queued, inFlight);
		}

		private static BudgetDecision remaining(CostBudgets budgets, LimitRegistry registry, String budget) {
			return budgets.remaining(registry.budgets().find(budget).orElseThrow(), RUN);
		}

	}

	/** The pinned virtual threads a recording saw. */
	record Pins(int total, List<String> starters, int onPurpose, int truncated, int submitFailed, Duration longest,
			Map<String, Integer> byWhom) {

		static Pins read(Path dump) {
			List<RecordedEvent> events;
			try {
				events = RecordingFile.readAllEvents(dump);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
			int total = 0;
			int onPurpose = 0;
			int truncated = 0;
			int submitFailed = 0;
			Duration longest = Duration.ZERO;
			List<String> starters = new ArrayList<>();
			Map<String, Integer> byWhom = new TreeMap<>();
			for (RecordedEvent event : events) {
				String name = event.getEventType().getName();
				if (name.equals("jdk.VirtualThreadSubmitFailed")) {
					submitFailed++;
					continue;
				}
				if (!name.equals("jdk.VirtualThreadPinned")) {
					continue;
				}
				total++;
				RecordedStackTrace stack = event.getStackTrace();
				List<RecordedFrame> frames = (stack != null) ? stack.getFrames() : List.of();
				if (stack == null || stack.isTruncated()) {
					truncated++;
				}
				if (event.getDuration().compareTo(longest) > 0) {
					longest = event.getDuration();
				}
				String reason = event.hasField("pinnedReason") ? ": " + event.getValue("pinnedReason") : "";
				byWhom.merge(whom(frames) + reason, 1, Integer::sum);
				if (frames.stream().anyMatch((frame) -> typeOf(frame).startsWith(PinnedOnPurpose.class.getName()))) {
					onPurpose++;
				}
				else if (frames.stream().anyMatch(Pins::isStarters)) {
					starters.add(describe(event, frames));
				}
			}
			return new Pins(total, starters, onPurpose, truncated, submitFailed, longest, byWhom);
		}

		/** The top frame that is neither the JDK's nor a library's common plumbing: whose code parked. */
		private static String whom(List<RecordedFrame> frames) {
			for (RecordedFrame frame : frames) {
				String type = typeOf(frame);
				if (!type.startsWith("java.") && !type.startsWith("jdk.") && !type.startsWith("sun.")) {
					return type + "." + frame.getMethod().getName();
				}
			}
			return frames.isEmpty() ? "(no stack)" : typeOf(frames.get(0)) + "." + frames.get(0).getMethod().getName();
		}

		private static boolean isStarters(RecordedFrame frame) {
			String type = typeOf(frame);
			return type.startsWith(STARTER) && !type.startsWith(TEST_PACKAGE);
		}

		private static String typeOf(RecordedFrame frame) {
			return (frame.getMethod() != null) ? frame.getMethod().getType().getName() : "";
		}

		private static String describe(RecordedEvent event, List<RecordedFrame> frames) {
			StringBuilder text = new StringBuilder(event.getDuration().toNanos() / 1000 + " us");
			for (String field : Arrays.asList("pinnedReason", "blockingOperation")) {
				if (event.hasField(field)) {
					text.append(", ").append(field).append('=').append((Object) event.getValue(field));
				}
			}
			frames.stream().limit(40).forEach((frame) -> text.append(System.lineSeparator()).append("    at ")
				.append(typeOf(frame)).append('.').append(frame.getMethod().getName()).append(':')
				.append(frame.getLineNumber()));
			return text.toString();
		}

	}

	/** Pins the thread that initializes it: parking inside a class initializer pins on every JDK. */
	static final class PinnedOnPurpose {

		/** Lets the memory run's pinned thread go; not in the class it pins, whose initialization it would wait for. */
		static final CountDownLatch MEMORY_RUN = new CountDownLatch(1);

		/** Lets the Redis run's pinned thread go. */
		static final CountDownLatch REDIS_RUN = new CountDownLatch(1);

		private PinnedOnPurpose() {
		}

		static void awaitRelease(CountDownLatch release) {
			try {
				release.await();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

	/** Initialized by the memory run's thread pinned on purpose. */
	static final class PinnedInMemoryRun {

		static {
			PinnedOnPurpose.awaitRelease(PinnedOnPurpose.MEMORY_RUN);
		}

		private PinnedInMemoryRun() {
		}

		static void touch() {
		}

	}

	/** Initialized by the Redis run's thread pinned on purpose. */
	static final class PinnedInRedisRun {

		static {
			PinnedOnPurpose.awaitRelease(PinnedOnPurpose.REDIS_RUN);
		}

		private PinnedInRedisRun() {
		}

		static void touch() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		Services services() {
			return new Services();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class DistributedApp {

		@Bean
		DistributedServices distributedServices() {
			return new DistributedServices();
		}

	}

	/** One method per kind of limit, on either backend. */
	static class Services {

		@RateLimited(value = "burst", key = "#run")
		public void burst(String run) {
		}

		@CostBudget(value = "tight", key = "#run", estimate = "0.01", actual = "0.01")
		@CostBudget(value = "wide", key = "#run", estimate = "0.03", actual = "0.01")
		public void spend(String run) {
		}

		/** Reports three times its estimate: the last two ask the store for more. */
		@CostBudget(value = "stream", key = "#run", estimate = "0.01")
		public void stream(String run) {
			BudgetMeter meter = BudgetMeter.current();
			for (int i = 0; i < 3; i++) {
				if (!meter.add("0.01")) {
					throw new IllegalStateException("the streaming budget refused an extension");
				}
			}
		}

		@Concurrency(value = "local", key = "#run")
		public void local(String run, Tally tally) {
			tally.inFlight();
		}

		@RateLimited(value = "paced", key = "#run")
		public void paced(String run, Tally tally) {
			tally.startedAt.add(System.nanoTime());
		}

	}

	/** The distributed caps, on Redis only. */
	static class DistributedServices {

		@Concurrency(value = "shared", key = "#run")
		public void shared(String run, Tally tally) {
			tally.inFlight();
		}

		@Concurrency(value = "queued", key = "#run")
		public void queued(String run, Tally tally) {
			tally.inFlight();
		}

	}

}
