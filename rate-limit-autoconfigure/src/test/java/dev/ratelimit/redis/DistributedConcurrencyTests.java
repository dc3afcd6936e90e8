package dev.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.concurrency.ConcurrencyLimitExceededException;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.concurrency.DistributedConcurrencyLimiter;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.support.RedisServerFixture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two application instances (two limiters, each with its own store and Redis
 * client) guard one section from 32 threads each, on the server's clock: the
 * number of calls inside the section never exceeds the permits, and reaches
 * them. Inside is counted after a permit is granted and uncounted before it
 * is released, so it can never be above what Redis holds: a count above the
 * permits would be a real breach, not a measuring artefact.
 */
class DistributedConcurrencyTests {

	private static final int THREADS_PER_INSTANCE = 32;

	private static final int CALLS_PER_THREAD = 10;

	private static final int PERMITS = 4;

	/** Simulated work inside the section, in nanoseconds: a call in flight, not a wait for time to pass. */
	private static final long WORK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

	private static final RedisServerFixture server = RedisServerFixture.shared();

	private final List<LettuceConnectionFactory> connectionFactories = new ArrayList<>();

	private final List<DistributedConcurrencyLimiter> limiters = new ArrayList<>();

	private final ExecutorService executor = Executors.newFixedThreadPool(2 * THREADS_PER_INSTANCE);

	private final LimitKeys keys = new LimitKeys("rl", 128);

	private final AtomicInteger inside = new AtomicInteger();

	private final AtomicInteger maxInside = new AtomicInteger();

	private final LongAdder admitted = new LongAdder();

	private final LongAdder rejected = new LongAdder();

	@BeforeEach
	void flush() {
		server.flushAll();
	}

	@AfterEach
	void shutDown() throws InterruptedException {
		this.executor.shutdownNow();
		assertThat(this.executor.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
		this.limiters.forEach(DistributedConcurrencyLimiter::close);
		this.connectionFactories.forEach(LettuceConnectionFactory::destroy);
	}

	@Test
	void waitingCallersOfTwoInstancesNeverExceedThePermits() throws Exception {
		ConcurrencyPolicy policy = policy(Duration.ofSeconds(30));
		run(policy);

		report("waiting up to 30s");
		assertThat(this.maxInside.get()).as("most calls inside at once").isEqualTo(PERMITS);
		// The wait is far longer than the whole run: every call got its turn.
		assertThat(this.rejected.sum()).isZero();
		assertThat(this.admitted.sum()).isEqualTo(2L * THREADS_PER_INSTANCE * CALLS_PER_THREAD);
		assertNothingHeld(policy);
	}

	@Test
	void callersRejectedAtOnceOfTwoInstancesNeverExceedThePermits() throws Exception {
		ConcurrencyPolicy policy = policy(Duration.ZERO);
		run(policy);

		report("no wait");
		assertThat(this.maxInside.get()).as("most calls inside at once").isEqualTo(PERMITS);
		assertThat(this.admitted.sum() + this.rejected.sum())
			.isEqualTo(2L * THREADS_PER_INSTANCE * CALLS_PER_THREAD);
		// 64 threads on 4 permits without waiting: most are turned away.
		assertThat(this.rejected.sum()).isGreaterThan(this.admitted.sum());
		assertNothingHeld(policy);
	}

	private void run(ConcurrencyPolicy policy) throws Exception {
		DistributedConcurrencyLimiter first = instance();
		DistributedConcurrencyLimiter second = instance();
		CyclicBarrier startGate = new CyclicBarrier(2 * THREADS_PER_INSTANCE);
		List<Future<?>> workers = new ArrayList<>();
		for (int i = 0; i < THREADS_PER_INSTANCE; i++) {
			workers.add(this.executor.submit(() -> callRepeatedly(first, policy, startGate)));
			workers.add(this.executor.submit(() -> callRepeatedly(second, policy, startGate)));
		}
		for (Future<?> worker : workers) {
			worker.get(60, TimeUnit.SECONDS);
		}
	}

	private Void callRepeatedly(DistributedConcurrencyLimiter limiter, ConcurrencyPolicy policy,
			CyclicBarrier startGate) throws Exception {
		startGate.await(30, TimeUnit.SECONDS);
		for (int call = 0; call < CALLS_PER_THREAD; call++) {
			Permit permit;
			try {
				permit = limiter.acquire(policy, "provider");
			}
			catch (ConcurrencyLimitExceededException ex) {
				this.rejected.increment();
				continue;
			}
			try {
				this.maxInside.accumulateAndGet(this.inside.incrementAndGet(), Math::max);
				LockSupport.parkNanos(WORK_NANOS);
				this.inside.decrementAndGet();
			}
			finally {
				permit.release();
			}
			this.admitted.increment();
		}
		return null;
	}

	private ConcurrencyPolicy policy(Duration maxWait) {
		return ConcurrencyPolicy.builder("provider")
			.permits(PERMITS)
			.scope(ConcurrencyPolicy.Scope.DISTRIBUTED)
			.maxWait(maxWait)
			.build();
	}

	private void assertNothingHeld(ConcurrencyPolicy policy) {
		assertThat(this.limiters.get(0).inUse(policy, "provider")).isZero();
		assertThat(server.call("EXISTS", this.keys.build("concurrency:" + policy.name(), "provider")))
			.as("the semaphore's key once every permit is back")
			.isEqualTo(":0");
	}

	private void report(String mode) {
		System.out.println("Distributed concurrency (" + mode + "): " + this.admitted.sum() + " admitted, "
				+ this.rejected.sum() + " rejected, at most " + this.maxInside.get() + " of " + PERMITS
				+ " permits in use at once");
	}

	private DistributedConcurrencyLimiter instance() {
		LettuceConnectionFactory connectionFactory = server.newConnectionFactory();
		this.connectionFactories.add(connectionFactory);
		DistributedConcurrencyLimiter limiter = new DistributedConcurrencyLimiter(
				new RedisPermitStore(connectionFactory), this.keys, null);
		this.limiters.add(limiter);
		return limiter;
	}

}
