package dev.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.ratelimit.concurrency.ConcurrencyLimitExceededException;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.concurrency.DistributedConcurrencyLimiter;
import dev.ratelimit.concurrency.DistributedLimitersForTests;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.concurrency.PermitStore;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.Sleeper;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Callers that wait for a permit, on explicit time: a fake sleeper moves the
 * manual clock that both the limiter and the script read, so a wait of
 * seconds runs in milliseconds and every sleep is recorded. A waiter is
 * admitted when a permit frees, rejected when its wait runs out, and asks
 * Redis a handful of times with growing, jittered pauses rather than in a
 * busy loop.
 */
class DistributedConcurrencyWaitTests extends SharedRedisTests {

	private static final long MILLI = 1_000;

	private static final long SECOND = 1_000_000;

	private final ManualTimeSource clock = new ManualTimeSource();

	private final LimitKeys keys = new LimitKeys("rl", 128);

	private final List<DistributedConcurrencyLimiter> limiters = new ArrayList<>();

	/** The waiter's sleeps, in microseconds. */
	private final List<Long> sleeps = new CopyOnWriteArrayList<>();

	/** The waiter's attempts to take a permit. */
	private final AtomicInteger attempts = new AtomicInteger();

	@AfterEach
	void closeLimiters() {
		this.limiters.forEach(DistributedConcurrencyLimiter::close);
	}

	@Test
	void waiterIsAdmittedWhenAHolderReleasesDuringItsWait() {
		ConcurrencyPolicy policy = policy(Duration.ofSeconds(2));
		Permit held = holder().acquire(policy, "k");
		DistributedConcurrencyLimiter waiter = waiter((micros) -> {
			recordSleep(micros);
			if (this.sleeps.size() == 1) {
				// The holder's call ends on another thread while the waiter sleeps.
				Thread releaser = new Thread(held::release, "holder");
				releaser.start();
				releaser.join();
			}
		});

		Permit permit = waiter.acquire(policy, "k");

		assertThat(permit).isNotNull();
		assertThat(this.sleeps).hasSize(1);
		assertThat(this.sleeps.get(0)).isBetween(1L, backoffBound(0));
		assertThat(this.attempts).hasValue(2);
		assertThat(waiter.inUse(policy, "k")).isEqualTo(1);
	}

	@Test
	void waiterIsRejectedWhenItsWaitRunsOutAfterAFewBackedOffAttempts() {
		ConcurrencyPolicy policy = policy(Duration.ofMillis(200));
		holder().acquire(policy, "k");
		DistributedConcurrencyLimiter waiter = waiter(this::recordSleep);

		assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
			.isThrownBy(() -> waiter.acquire(policy, "k"))
			.satisfies((ex) -> assertThat(ex.getRetryAfterMicros())
				.as("a live holder's lease end is no forecast: at most a second")
				.isEqualTo(SECOND));

		assertThat(this.sleeps.stream().mapToLong(Long::longValue).sum()).as("slept exactly the max-wait")
			.isEqualTo(200 * MILLI);
		for (int i = 0; i < this.sleeps.size(); i++) {
			assertThat(this.sleeps.get(i)).as("sleep %d of %s", i, this.sleeps)
				.isBetween(1L, backoffBound(i));
		}
		// Polling every millisecond would ask 200 times; the backoff asks about a dozen.
		assertThat(this.attempts.get()).as("attempts in 200 ms").isBetween(6, 40);
		assertThat(this.attempts).hasValue(this.sleeps.size() + 1);
	}

	@Test
	void waiterWakesWhenTheEarliestLeaseEndsAndTakesTheDeadHoldersPermit() {
		ConcurrencyPolicy policy = policy(Duration.ofSeconds(1), 2);
		DistributedConcurrencyLimiter dying = holder();
		dying.acquire(policy, "k");
		dying.close();
		this.clock.advanceMicros(29 * SECOND);
		// A later holder keeps the key's real TTL long: Redis expires keys on its own clock, and
		// a key whose latest lease ended 500 us from now on the manual clock would get 1 ms.
		holder().acquire(policy, "k");
		this.clock.advanceMicros(SECOND - 500);
		DistributedConcurrencyLimiter waiter = waiter(this::recordSleep);

		assertThat(waiter.acquire(policy, "k")).isNotNull();

		// No sleep overshoots the lease's end, so the permit is taken the moment it frees.
		assertThat(this.sleeps.stream().mapToLong(Long::longValue).sum()).isEqualTo(500);
		assertThat(this.attempts).hasValue(this.sleeps.size() + 1);
	}

	@Test
	void callerWithoutMaxWaitAsksOnceAndNeverSleeps() {
		ConcurrencyPolicy policy = policy(Duration.ZERO);
		holder().acquire(policy, "k");
		DistributedConcurrencyLimiter caller = waiter(neverSleeps());

		assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
			.isThrownBy(() -> caller.acquire(policy, "k"))
			.satisfies((ex) -> assertThat(ex.getRetryAfterMicros()).isEqualTo(SECOND));
		assertThat(this.attempts).hasValue(1);
	}

	@Test
	void interruptedWaiterGivesUpAndKeepsTheInterrupt() {
		ConcurrencyPolicy policy = policy(Duration.ofSeconds(2));
		holder().acquire(policy, "k");
		DistributedConcurrencyLimiter waiter = waiter((micros) -> {
			throw new InterruptedException();
		});

		assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
			.isThrownBy(() -> waiter.acquire(policy, "k"));
		assertThat(Thread.interrupted()).isTrue();
		assertThat(waiter.inUse(policy, "k")).as("no permit taken").isEqualTo(1);
	}

	private void recordSleep(long micros) {
		this.sleeps.add(micros);
		this.clock.advanceMicros(micros);
	}

	private static Sleeper neverSleeps() {
		return (micros) -> {
			throw new AssertionError("no wait expected");
		};
	}

	/**
	 * Returns the longest sleep before attempt {@code n + 1}: the backoff bound
	 * starts at 2 ms and doubles up to 50 ms; the jitter picks up to it.
	 */
	private static long backoffBound(int n) {
		return (n >= 5) ? 50 * MILLI : (2 * MILLI) << n;
	}

	/** A limiter on the manual clock that holds permits and never waits. */
	private DistributedConcurrencyLimiter holder() {
		return track(DistributedLimitersForTests.create(new RedisPermitStore(connectionFactory, this.clock), this.keys,
				null, this.clock, neverSleeps(), null));
	}

	/** A limiter on the manual clock that counts its attempts to take a permit. */
	private DistributedConcurrencyLimiter waiter(Sleeper sleeper) {
		PermitStore counting = new ForwardingPermitStore(new RedisPermitStore(connectionFactory, this.clock)) {

			@Override
			public Attempt tryAcquire(ConcurrencyPolicy policy, String key, String id) {
				DistributedConcurrencyWaitTests.this.attempts.incrementAndGet();
				return super.tryAcquire(policy, key, id);
			}

		};
		return track(DistributedLimitersForTests.create(counting, this.keys, null, this.clock, sleeper, null));
	}

	private DistributedConcurrencyLimiter track(DistributedConcurrencyLimiter limiter) {
		this.limiters.add(limiter);
		return limiter;
	}

	private static ConcurrencyPolicy policy(Duration maxWait) {
		return policy(maxWait, 1);
	}

	private static ConcurrencyPolicy policy(Duration maxWait, int permits) {
		return ConcurrencyPolicy.builder("provider")
			.permits(permits)
			.scope(ConcurrencyPolicy.Scope.DISTRIBUTED)
			.maxWait(maxWait)
			.permitTtl(Duration.ofSeconds(30))
			.build();
	}

}
