package dev.ratelimit.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.support.RedisClusterFixture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Coalescing on a real three-master Redis Cluster: decisions queue per slot,
 * each slot with its own call in flight, so no call ever names keys of two
 * slots (a {@code CROSSSLOT} refusal would fail every decision in it) and a
 * slot that moves redirects its batch whole. Decisions queued on keys of six
 * slots, on every node, decide as one call each would.
 */
class RedisClusterCoalescingTests {

	private static final RedisClusterFixture cluster = RedisClusterFixture.shared();

	private static final RateLimitPolicy POLICY = RateLimitPolicy.builder("clustered")
		.algorithm(Algorithm.TOKEN_BUCKET)
		.capacity(4)
		.refill("4/10m")
		.build();

	private final ExecutorService requests = Executors.newFixedThreadPool(32);

	private LettuceConnectionFactory coalescing;

	private LettuceConnectionFactory oneByOne;

	@BeforeEach
	void connect() {
		cluster.flushAll();
		this.coalescing = cluster.newConnectionFactory(new RedisLimiterConnection.Coalescing(true, 128));
		this.oneByOne = cluster.newConnectionFactory(RedisLimiterConnection.Coalescing.OFF);
	}

	@AfterEach
	void close() {
		this.requests.shutdownNow();
		this.coalescing.destroy();
		this.oneByOne.destroy();
	}

	@Test
	void decisionsCoalescePerSlotAndNeverCrossOne() throws Exception {
		DecisionCoalescer coalescer = ((LimiterLettuceConnectionFactory) this.coalescing).coalescer();
		assertThat(coalescer).isNotNull();
		List<Integer> sizes = new CopyOnWriteArrayList<>();
		coalescer.onBatch(sizes::add);
		List<String> tags = List.of("a", "b", "c", "d", "e", "f");
		assertThat(tags.stream().map((tag) -> SlotHash.getSlot("{" + tag + "}")).distinct()).hasSize(6);
		RedisRateLimitBackend coalesced = new RedisRateLimitBackend(this.coalescing);
		RedisRateLimitBackend single = new RedisRateLimitBackend(this.oneByOne);
		List<String> keys = new ArrayList<>();
		for (int i = 0; i < 30; i++) {
			// Five decisions a slot, on keys of their own and on one key the slot shares, in turn.
			String tag = tags.get(i % tags.size());
			keys.add("rl:{" + tag + "}:" + ((i % 4 == 0) ? "shared" : "k" + (i / tags.size())));
		}
		Runnable release = coalescer.hold();
		List<Future<Decision>> outcomes = new ArrayList<>();
		try {
			for (int i = 0; i < keys.size(); i++) {
				String key = "c:" + keys.get(i);
				outcomes.add(this.requests.submit(() -> coalesced.tryConsume(POLICY, key, 1)));
				awaitQueued(coalescer, i + 1);
			}
		}
		finally {
			release.run();
		}
		for (int i = 0; i < keys.size(); i++) {
			Decision alone = single.tryConsume(POLICY, "s:" + keys.get(i), 1);
			// The same verdict and state; the times are each node's clock, read a moment apart.
			Decision together = outcomes.get(i).get(30, TimeUnit.SECONDS);
			assertThat(together.allowed()).as(keys.get(i)).isEqualTo(alone.allowed());
			assertThat(together.remaining()).as(keys.get(i)).isEqualTo(alone.remaining());
		}
		// Six slots: each sent its first decision alone, then the four that queued behind it as one call.
		assertThat(sizes).containsExactlyInAnyOrder(1, 1, 1, 1, 1, 1, 4, 4, 4, 4, 4, 4);
	}

	private static void awaitQueued(DecisionCoalescer coalescer, int count) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (coalescer.held() + coalescer.waiting() < count) {
			assertThat(System.nanoTime()).as("decision %d queued within 10 s", count).isLessThan(deadline);
			LockSupport.parkNanos(100_000);
		}
	}

}
