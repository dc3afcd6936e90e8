package dev.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.BudgetStore;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.support.RedisServerFixture;

import static dev.ratelimit.redis.BudgetStoreConformanceTests.CENT;
import static dev.ratelimit.redis.BudgetStoreConformanceTests.UNIT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two application instances (two stores, each with its own Redis client) spend
 * one budget from 64 threads on the server's clock: no admitted reservation
 * ever takes spent plus reserved above the amount, and what is spent in the
 * end is the sum of the settled actual costs to the micro-unit. The window is
 * rolling and an hour long, and leases last five minutes, so nothing expires
 * while the test runs.
 */
class RedisBudgetConcurrencyTests {

	private static final int THREADS_PER_INSTANCE = 32;

	private static final int ATTEMPTS_PER_THREAD = 40;

	private static final long AMOUNT = 10 * UNIT;

	private static final RedisServerFixture server = RedisServerFixture.shared();

	private final List<LettuceConnectionFactory> connectionFactories = new ArrayList<>();

	private final ExecutorService executor = Executors.newFixedThreadPool(2 * THREADS_PER_INSTANCE);

	private final BudgetPolicy policy = BudgetPolicy.builder("shared")
		.limit("1h", "10.00")
		.reservationTimeout(Duration.ofMinutes(5))
		.build();

	private final String key = new LimitKeys("rl", 128).build("budget:shared", "tenant-1");

	/** Never more than the store's spent + reserved: admissions are added after, refunds taken before. */
	private final AtomicLong lowerBound = new AtomicLong();

	private final LongAdder settledActuals = new LongAdder();

	private final LongAdder admitted = new LongAdder();

	private final LongAdder refused = new LongAdder();

	private final ConcurrentLinkedQueue<String> overspends = new ConcurrentLinkedQueue<>();

	@BeforeEach
	void flush() {
		server.flushAll();
	}

	@AfterEach
	void shutDown() throws InterruptedException {
		this.executor.shutdownNow();
		assertThat(this.executor.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
		this.connectionFactories.forEach(LettuceConnectionFactory::destroy);
	}

	@Test
	void twoInstancesNeverOverspendAndChargeExactlyTheSettledCosts() throws Exception {
		BudgetStore first = instance();
		BudgetStore second = instance();
		CyclicBarrier startGate = new CyclicBarrier(2 * THREADS_PER_INSTANCE);
		List<Future<?>> workers = new ArrayList<>();
		for (int i = 0; i < THREADS_PER_INSTANCE; i++) {
			workers.add(this.executor.submit(() -> spend(first, startGate)));
			workers.add(this.executor.submit(() -> spend(second, startGate)));
		}
		for (Future<?> worker : workers) {
			worker.get(60, TimeUnit.SECONDS);
		}

		assertThat(this.overspends).isEmpty();
		BudgetDecision end = first.peek(this.policy, this.key);
		assertThat(end.reservedMicros()).isZero();
		assertThat(end.spentMicros()).containsExactly(this.settledActuals.sum());
		assertThat(end.spentMicros()[0]).isLessThanOrEqualTo(AMOUNT);
		assertThat(this.lowerBound.get()).isEqualTo(this.settledActuals.sum());
		// The budget really was contended: many were admitted, and many refused near the amount.
		assertThat(this.admitted.sum()).isGreaterThan(50);
		assertThat(this.refused.sum()).isGreaterThan(50);
	}

	private Void spend(BudgetStore store, CyclicBarrier startGate) throws Exception {
		startGate.await(30, TimeUnit.SECONDS);
		ThreadLocalRandom random = ThreadLocalRandom.current();
		for (int attempt = 0; attempt < ATTEMPTS_PER_THREAD; attempt++) {
			long estimate = random.nextLong(CENT, 20 * CENT + 1);
			String id = UUID.randomUUID().toString();
			BudgetDecision decision = store.reserve(this.policy, this.key, id, estimate);
			if (!decision.allowed()) {
				this.refused.increment();
				continue;
			}
			this.admitted.increment();
			// Spent and reserved as the script saw them right after admitting: the exact check.
			long held = decision.spentMicros()[0] + decision.reservedMicros();
			if (held > AMOUNT) {
				this.overspends.add("admission left " + held + " spent and reserved: " + decision);
			}
			long bound = this.lowerBound.addAndGet(estimate);
			if (bound > AMOUNT) {
				this.overspends.add("at least " + bound + " spent and reserved after admitting " + id);
			}
			if (random.nextInt(8) == 0) {
				this.lowerBound.addAndGet(-estimate);
				store.release(this.policy, this.key, id);
			}
			else {
				long actual = random.nextLong(0, estimate + 1);
				this.lowerBound.addAndGet(actual - estimate);
				this.settledActuals.add(actual);
				store.settle(this.policy, this.key, id, actual);
			}
		}
		return null;
	}

	private BudgetStore instance() {
		LettuceConnectionFactory connectionFactory = server.newConnectionFactory();
		this.connectionFactories.add(connectionFactory);
		return new RedisBudgetStore(connectionFactory);
	}

}
