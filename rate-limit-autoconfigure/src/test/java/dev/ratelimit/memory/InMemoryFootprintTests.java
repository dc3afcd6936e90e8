package dev.ratelimit.memory;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Measures the heap the in-memory backend holds per key, including the key
 * string and the cache entry, for every algorithm. The figures in
 * docs/algorithms.md come from this test:
 * {@code mvn -pl rate-limit-autoconfigure test -Dtest=InMemoryFootprintTests}.
 */
class InMemoryFootprintTests {

	private static final int KEYS = 100_000;

	private final LimitKeys keys = new LimitKeys("rl", 128);

	@Test
	void everyAlgorithmKeepsAKeyInAFewHundredBytes() {
		StringBuilder report = new StringBuilder();
		for (Algorithm algorithm : Algorithm.values()) {
			RateLimitPolicy.Builder builder = RateLimitPolicy.builder("p").algorithm(algorithm).capacity(100);
			RateLimitPolicy policy = algorithm.isRateBased() ? builder.refill("100/1m").build()
					: builder.window("1m").build();
			long perKey = bytesPerKey(policy);
			report.append(String.format("MEMORY-JVM %s %d bytes/key%n", algorithm, perKey));
			assertThat(perKey).as("%s bytes per key", algorithm).isBetween(50L, 600L);
		}
		System.out.print(report);
	}

	private long bytesPerKey(RateLimitPolicy policy) {
		ManualTimeSource clock = new ManualTimeSource();
		long before = usedHeap();
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(clock, KEYS * 2L);
		for (int i = 0; i < KEYS; i++) {
			// A typical key: a user id of a dozen characters.
			backend.tryConsume(policy, this.keys.build(policy.name(), "user-" + (10_000_000 + i)), 1);
		}
		assertThat(backend.size()).isEqualTo(KEYS);
		long after = usedHeap();
		// Keep the backend reachable until measured.
		assertThat(backend.size()).isEqualTo(KEYS);
		return (after - before) / KEYS;
	}

	private static long usedHeap() {
		MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
		long used = Long.MAX_VALUE;
		// Several collections settle the heap; the smallest reading is the live set.
		for (int i = 0; i < 4; i++) {
			System.gc();
			used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
		}
		return used;
	}

}
