package dev.ratelimit.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.support.RedisServerFixture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two application instances (two backends, each with its own Redis client)
 * hammer one key from many threads: every algorithm's limit holds exactly.
 * Refills are an hour long and windows an hour wide, so nothing is given back
 * while the test runs and the capacity is all that can be admitted.
 */
class RedisConcurrencyTests {

	private static final int THREADS_PER_INSTANCE = 32;

	private static final int ATTEMPTS_PER_THREAD = 25;

	private static final int CAPACITY = 50;

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

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void twoInstancesOnOneKeyAdmitExactlyTheCapacity(Algorithm algorithm) throws Exception {
		RateLimitPolicy.Builder builder = RateLimitPolicy.builder("shared").algorithm(algorithm).capacity(CAPACITY);
		RateLimitPolicy policy = algorithm.isRateBased() ? builder.refill("1/1h").build() : builder.window("1h").build();
		String key = new LimitKeys("rl", 128).build(policy.name(), "tenant-1");
		// A fixed window of the server's clock could roll over mid-test: both
		// instances read one fixed clock instead. The others use the server's TIME.
		TimeSource clock = (algorithm == Algorithm.FIXED_WINDOW) ? new ManualTimeSource() : null;
		RateLimitBackend first = instance(clock);
		RateLimitBackend second = instance(clock);
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
		assertThat(admitted.sum()).isEqualTo(CAPACITY);
		assertThat(denied.sum()).isEqualTo(2L * THREADS_PER_INSTANCE * ATTEMPTS_PER_THREAD - CAPACITY);
		Decision after = first.tryConsume(policy, key, 1);
		assertThat(after.allowed()).isFalse();
		assertThat(after.remaining()).isZero();
	}

	private RateLimitBackend instance(@Nullable TimeSource clock) {
		LettuceConnectionFactory connectionFactory = server.newConnectionFactory();
		this.connectionFactories.add(connectionFactory);
		return new RedisRateLimitBackend(connectionFactory, clock);
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
