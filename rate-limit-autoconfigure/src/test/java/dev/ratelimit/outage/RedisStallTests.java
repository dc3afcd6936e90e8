package dev.ratelimit.outage;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import dev.ratelimit.support.RedisServerFixture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Redis freezes (SIGSTOP) under load and thaws (SIGCONT): two instances on one
 * real Redis, eight threads hammering one user's limit, the starter's
 * defaults. While Redis is frozen each instance decides in its own memory, so
 * the user gets at most the limit once per instance on top of what Redis had
 * granted; when Redis answers again, decisions are back on it within one
 * timeout and a probe, not after an open circuit's wait (before: every call
 * admitted while frozen, and for 3 s after).
 */
class RedisStallTests {

	/** A server of this class's own: the test freezes it. */
	static final RedisServerFixture redis = RedisServerFixture.start();

	static final int CAPACITY = 10;

	static final int HAMMERS_PER_INSTANCE = 4;

	/** Units Redis grants before it freezes. */
	static final int GRANTED_BEFORE = 4;

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@Test
	void aFrozenRedisLeavesEachInstanceItsOwnLimitAndDecisionsReturnToRedisWhenItThaws() {
		// Nothing refills during the test: every unit admitted is counted against the capacity.
		List<String> properties = List.of("rate-limit.policies.per-user.capacity=" + CAPACITY,
				"rate-limit.policies.per-user.refill=1/1h");
		TwoInstances.run(redis, properties, (first, second) -> {
			// Redis grants a few units first, as before any outage.
			for (int i = 0; i < GRANTED_BEFORE / 2; i++) {
				assertThat(first.allowed("per-user", "alice")).isTrue();
				assertThat(second.allowed("per-user", "alice")).isTrue();
			}
			AtomicBoolean running = new AtomicBoolean(true);
			AtomicLong admitted = new AtomicLong(GRANTED_BEFORE);
			List<Thread> hammers = new ArrayList<>();
			redis.pause();
			long frozeAt = System.nanoTime();
			long thawedAt;
			try {
				for (int i = 0; i < 2 * HAMMERS_PER_INSTANCE; i++) {
					hammers.add(hammer((i % 2 == 0) ? first : second, running, admitted));
				}
				// Frozen under load: each instance decides many calls of its own, for 2 s.
				await().atMost(Duration.ofSeconds(30))
					.until(() -> first.counting.fellBack.get() >= 200 && second.counting.fellBack.get() >= 200
							&& System.nanoTime() - frozeAt >= 2_000_000_000L);
			}
			finally {
				redis.resume();
				thawedAt = System.nanoTime();
			}
			long onRedisAtThaw = first.counting.onRedis.get() + second.counting.onRedis.get();
			await().atMost(Duration.ofSeconds(10))
				.until(() -> first.counting.onRedis.get() + second.counting.onRedis.get() > onRedisAtThaw + 200);
			running.set(false);
			hammers.forEach(TwoInstances::join);

			long lastLocal = Math.max(first.counting.lastFellBackNanos.get(), second.counting.lastFellBackNanos.get());
			long back = Math.max(0, Duration.ofNanos(lastLocal - thawedAt).toMillis());
			String seen = String.format("admitted %d in all; decided locally %d and %d, allowed %d and %d; "
					+ "the last call fell back %d ms after the thaw", admitted.get(), first.counting.local.get(),
					second.counting.local.get(), first.counting.localAllowed.get(), second.counting.localAllowed.get(),
					back);
			// At most the limit once per instance while Redis was away, on top of what Redis grants.
			assertThat(first.counting.localAllowed.get()).as(seen).isLessThanOrEqualTo(CAPACITY);
			assertThat(second.counting.localAllowed.get()).as(seen).isLessThanOrEqualTo(CAPACITY);
			assertThat(admitted.get()).as(seen).isLessThanOrEqualTo(3 * CAPACITY);
			// Within one timeout (250 ms) and a probe, with room for a loaded machine: no open circuit's wait.
			assertThat(back).as(seen).isLessThan(1_000);
		});
	}

	/** Takes units of the user's limit on an instance until told to stop, counting those admitted. */
	private static Thread hammer(TwoInstances.Instance instance, AtomicBoolean running, AtomicLong admitted) {
		Thread thread = new Thread(() -> {
			while (running.get()) {
				if (instance.allowed("per-user", "alice")) {
					admitted.incrementAndGet();
				}
			}
		}, "hammer");
		thread.setDaemon(true);
		thread.start();
		return thread;
	}

}
