package dev.ratelimit.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.support.RedisServerFixture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two application instances (two backends, each with its own Redis client)
 * hammer one key from many threads: the limit holds exactly.
 */
class RedisConcurrencyTests {

	private static final int THREADS_PER_INSTANCE = 32;

	private static final int ATTEMPTS_PER_THREAD = 25;

	private static final RedisServerFixture server = RedisServerFixture.shared();

	private final List<LettuceConnectionFactory> connectionFactories = new ArrayList<>();

	private final ExecutorService executor = Executors.newFixedThreadPool(2 * THREADS_PER_INSTANCE);

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
	void twoInstancesOnOneKeyAdmitExactlyTheCapacity() throws Exception {
		// One token an hour: nothing refills while the test runs.
		RateLimitPolicy policy = RateLimitPolicy.builder("shared").capacity(50).refill("1/1h").build();
		String key = new LimitKeys("rl", 128).build(policy.name(), "tenant-1");
		RateLimitBackend first = instance();
		RateLimitBackend second = instance();
		CyclicBarrier startGate = new CyclicBarrier(2 * THREADS_PER_INSTANCE);
		LongAdder admitted = new LongAdder();
		LongAdder denied = new LongAdder();
		List<Future<?>> workers = new ArrayList<>();
		for (int i = 0; i < THREADS_PER_INSTANCE; i++) {
			workers.add(this.executor.submit(() -> hammer(first, policy, key, startGate, admitted, denied)));
			workers.add(this.executor.submit(() -> hammer(second, policy, key, startGate, admitted, denied)));
		}
		for (Future<?> worker : workers) {
			worker.get(60, TimeUnit.SECONDS);
		}
		assertThat(admitted.sum()).isEqualTo(50);
		assertThat(denied.sum()).isEqualTo(2L * THREADS_PER_INSTANCE * ATTEMPTS_PER_THREAD - 50);
		Decision after = first.tryConsume(policy, key, 1);
		assertThat(after.allowed()).isFalse();
		assertThat(after.remaining()).isZero();
	}

	private RateLimitBackend instance() {
		LettuceConnectionFactory connectionFactory = server.newConnectionFactory();
		this.connectionFactories.add(connectionFactory);
		return new RedisRateLimitBackend(connectionFactory);
	}

	private static Void hammer(RateLimitBackend backend, RateLimitPolicy policy, String key, CyclicBarrier startGate,
			LongAdder admitted, LongAdder denied) throws Exception {
		startGate.await(30, TimeUnit.SECONDS);
		for (int i = 0; i < ATTEMPTS_PER_THREAD; i++) {
			if (backend.tryConsume(policy, key, 1).allowed()) {
				admitted.increment();
			}
			else {
				denied.increment();
			}
		}
		return null;
	}

}
