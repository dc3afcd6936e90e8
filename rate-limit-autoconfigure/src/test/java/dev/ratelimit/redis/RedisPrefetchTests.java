package dev.ratelimit.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.prefetch.PrefetchingBackend;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Prefetch mode against a real Redis: one EVALSHA per prefetch, and several
 * instances prefetching concurrently never spend more than Redis gave out.
 */
class RedisPrefetchTests extends SharedRedisTests {

	// A window long enough that it cannot end during the test, so every token comes from one window.
	private final RateLimitPolicy policy = RateLimitPolicy.builder("prefetched")
		.algorithm(Algorithm.FIXED_WINDOW)
		.capacity(1_000)
		.window("1h")
		.prefetch(20)
		.build();

	private final String key = new LimitKeys("rl", 128).build(this.policy.name(), "tenant-1");

	@Test
	void oneScriptCallPerPrefetch() {
		PrefetchingBackend backend = instance();
		backend.tryConsume(this.policy, this.key, 1);
		assertThat(server.call("CONFIG", "RESETSTAT")).isEqualTo("+OK");
		for (int i = 0; i < 199; i++) {
			assertThat(backend.tryConsume(this.policy, this.key, 1).allowed()).isTrue();
		}
		assertThat(CommandStats.calls(connectionFactory, "fcall")).isEqualTo(9);
		assertThat(backend.held(this.key)).isZero();
	}

	@Test
	void concurrentInstancesNeverSpendMoreThanRedisGaveOut() throws Exception {
		List<PrefetchingBackend> instances = List.of(instance(), instance(), instance(), instance());
		ExecutorService pool = Executors.newFixedThreadPool(16);
		try {
			List<Callable<Integer>> callers = new ArrayList<>();
			for (int t = 0; t < 16; t++) {
				PrefetchingBackend backend = instances.get(t % instances.size());
				callers.add(() -> {
					int admitted = 0;
					for (int i = 0; i < 200; i++) {
						admitted += backend.tryConsume(this.policy, this.key, 1).allowed() ? 1 : 0;
					}
					return admitted;
				});
			}
			int admitted = 0;
			for (Future<Integer> result : pool.invokeAll(callers)) {
				admitted += result.get();
			}
			long held = instances.stream().mapToLong((backend) -> backend.held(this.key)).sum();
			// 3,200 calls for 1,000 tokens: what was admitted plus what is still in hand is exactly what Redis gave.
			assertThat(admitted + held).isEqualTo(1_000);
			assertThat(held).isLessThan(4 * this.policy.prefetch());
		}
		finally {
			pool.shutdownNow();
		}
	}

	private PrefetchingBackend instance() {
		return new PrefetchingBackend(new RedisRateLimitBackend(connectionFactory), TimeSource.system(), 100);
	}

}
