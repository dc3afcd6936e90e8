package dev.ratelimit.memory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class InMemoryRateLimitBackendTests {

	private final ManualTimeSource clock = new ManualTimeSource();

	private final RateLimitPolicy policy = RateLimitPolicy.builder("p").capacity(2).refill("1/1s").build();

	@Test
	void idleKeysAreDroppedOnceTheirBucketWouldBeFullAgain() {
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(this.clock, 1_000);
		for (int i = 0; i < 100; i++) {
			backend.tryConsume(this.policy, "k" + i, 1);
		}
		assertThat(backend.size()).isEqualTo(100);
		// not before the buckets are full again (2 s)...
		this.clock.advance(Duration.ofMillis(1_999));
		assertThat(backend.size()).isEqualTo(100);
		// ...and soon after: Caffeine's timer wheel has a granularity of about a second
		this.clock.advance(Duration.ofSeconds(5));
		assertThat(backend.size()).isZero();
	}

	@Test
	void keyCountNeverExceedsTheBound() {
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(this.clock, 50);
		for (int i = 0; i < 10_000; i++) {
			backend.tryConsume(this.policy, "k" + i, 1);
		}
		assertThat(backend.size()).isLessThanOrEqualTo(50);
	}

	@Test
	void droppingAnIdleKeyChangesNoDecision() {
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(this.clock, 10);
		assertThat(backend.tryConsume(this.policy, "k", 2).allowed()).isTrue();
		this.clock.advance(Duration.ofSeconds(10));
		assertThat(backend.size()).isZero();
		assertThat(backend.tryConsume(this.policy, "k", 2).allowed()).isTrue();
		assertThat(backend.tryConsume(this.policy, "k", 1).allowed()).isFalse();
	}

	@Test
	void manyThreadsOnOneKeyAreAdmittedExactlyTheCapacity() throws Exception {
		RateLimitPolicy slow = RateLimitPolicy.builder("slow").capacity(1_000).refill("1/1h").build();
		InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(this.clock, 10);
		ExecutorService pool = Executors.newFixedThreadPool(16);
		CountDownLatch start = new CountDownLatch(1);
		List<Future<Integer>> results = new ArrayList<>();
		for (int t = 0; t < 16; t++) {
			results.add(pool.submit(() -> {
				start.await();
				int admitted = 0;
				for (int i = 0; i < 500; i++) {
					if (backend.tryConsume(slow, "hot", 1).allowed()) {
						admitted++;
					}
				}
				return admitted;
			}));
		}
		start.countDown();
		int total = 0;
		for (Future<Integer> result : results) {
			total += result.get(30, TimeUnit.SECONDS);
		}
		pool.shutdown();
		assertThat(total).isEqualTo(1_000);
	}

	@Test
	void nonPositiveBoundIsRejected() {
		assertThatIllegalArgumentException().isThrownBy(() -> new InMemoryRateLimitBackend(this.clock, 0))
			.withMessageContaining("0");
	}

}
