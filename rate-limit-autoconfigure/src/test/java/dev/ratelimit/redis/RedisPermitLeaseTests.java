package dev.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.ratelimit.concurrency.ConcurrencyLimitExceededException;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.concurrency.DistributedConcurrencyLimiter;
import dev.ratelimit.concurrency.DistributedLimitersForTests;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.concurrency.PermitStore;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Leases of distributed permits on explicit time, one manual clock being both
 * the script's and the limiters' "now": a holder that dies gives its permit
 * back after one lease, a live holder keeps it by renewing, a lost permit is
 * never brought back, and the semaphore's key lives exactly as long as its
 * latest lease.
 */
class RedisPermitLeaseTests extends SharedRedisTests {

	private static final long SECOND = 1_000_000;

	private final ManualTimeSource clock = new ManualTimeSource();

	private final LimitKeys keys = new LimitKeys("rl", 128);

	private final List<DistributedConcurrencyLimiter> limiters = new ArrayList<>();

	private final ConcurrencyPolicy one = policy("one", 1);

	private StringRedisTemplate redis;

	@BeforeEach
	void setUp() {
		this.redis = new StringRedisTemplate(connectionFactory);
	}

	@AfterEach
	void closeLimiters() {
		this.limiters.forEach(DistributedConcurrencyLimiter::close);
	}

	@Test
	void permitOfAHolderThatDiedFreesWhenItsLeaseEnds() {
		DistributedConcurrencyLimiter dying = limiter();
		DistributedConcurrencyLimiter survivor = limiter();
		dying.acquire(this.one, "k");
		// The instance dies: no release, no more renewals.
		dying.close();

		this.clock.advance(Duration.ofMillis(29_500));
		assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
			.isThrownBy(() -> survivor.acquire(this.one, "k"))
			.satisfies((ex) -> assertThat(ex.getRetryAfterMicros()).as("until the dead lease ends")
				.isEqualTo(SECOND / 2));
		this.clock.advanceMicros(SECOND / 2 - 1);
		assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
			.isThrownBy(() -> survivor.acquire(this.one, "k"));
		this.clock.advanceMicros(1);
		assertThat(survivor.acquire(this.one, "k")).isNotNull();
		assertThat(survivor.inUse(this.one, "k")).isEqualTo(1);
	}

	@Test
	void longCallKeepsItsPermitPastTheLeaseByRenewing() {
		DistributedConcurrencyLimiter holder = limiter();
		DistributedConcurrencyLimiter other = limiter();
		Permit permit = holder.acquire(this.one, "k");

		this.clock.advance(Duration.ofSeconds(20));
		holder.renewAll();
		this.clock.advance(Duration.ofSeconds(15));
		assertThat(holder.inUse(this.one, "k")).as("held 35s into a 30s lease").isEqualTo(1);
		assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
			.isThrownBy(() -> other.acquire(this.one, "k"))
			.satisfies((ex) -> assertThat(ex.getRetryAfterMicros()).as("15s to the lease's end, capped")
				.isEqualTo(SECOND));

		// Renewed for one lease from the renewal, no longer.
		this.clock.advance(Duration.ofSeconds(15));
		assertThat(other.acquire(this.one, "k")).isNotNull();
		permit.release();
		assertThat(other.inUse(this.one, "k")).as("the late release leaves the new holder alone").isEqualTo(1);
	}

	@Test
	void renewalOfAnExpiredPermitFindsItLostAndNeverBringsItBack() {
		DistributedConcurrencyLimiter holder = limiter();
		DistributedConcurrencyLimiter other = limiter();
		holder.acquire(this.one, "k");
		this.clock.advance(Duration.ofSeconds(30));
		Permit taken = other.acquire(this.one, "k");

		holder.renewAll();
		holder.renewAll();

		assertThat(holder.inUse(this.one, "k")).isEqualTo(1);
		assertThat(this.redis.opsForZSet().range(key(this.one, "k"), 0, -1)).hasSize(1);
		taken.release();
		assertThat(this.redis.hasKey(key(this.one, "k"))).isFalse();
	}

	@Test
	void releaseIsIdempotent() {
		ConcurrencyPolicy two = policy("two", 2);
		DistributedConcurrencyLimiter limiter = limiter();
		Permit first = limiter.acquire(two, "k");
		limiter.acquire(two, "k");

		first.release();
		first.release();
		first.close();

		assertThat(limiter.inUse(two, "k")).isEqualTo(1);
		limiter.acquire(two, "k");
		assertThatExceptionOfType(ConcurrencyLimitExceededException.class).isThrownBy(() -> limiter.acquire(two, "k"));
	}

	@Test
	void expiredPermitsAreDroppedBeforeCounting() {
		ConcurrencyPolicy three = policy("three", 3);
		DistributedConcurrencyLimiter dying = limiter();
		dying.acquire(three, "k");
		dying.acquire(three, "k");
		dying.close();
		this.clock.advance(Duration.ofSeconds(10));
		DistributedConcurrencyLimiter survivor = limiter();
		survivor.acquire(three, "k");
		assertThat(survivor.inUse(three, "k")).isEqualTo(3);

		this.clock.advance(Duration.ofSeconds(20));
		assertThat(survivor.inUse(three, "k")).as("counting skips expired leases").isEqualTo(1);
		assertThat(this.redis.opsForZSet().zCard(key(three, "k"))).as("a read leaves them").isEqualTo(3);
		survivor.acquire(three, "k");
		survivor.acquire(three, "k");
		assertThat(this.redis.opsForZSet().zCard(key(three, "k"))).as("the next write drops them").isEqualTo(3);
		assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
			.isThrownBy(() -> survivor.acquire(three, "k"));
	}

	@Test
	void keyLivesUntilItsLatestLeaseEnds() {
		ConcurrencyPolicy two = policy("two", 2);
		DistributedConcurrencyLimiter limiter = limiter();
		String key = key(two, "k");
		Permit first = limiter.acquire(two, "k");
		assertTtl(key, 30 * SECOND);

		this.clock.advance(Duration.ofSeconds(10));
		Permit second = limiter.acquire(two, "k");
		assertTtl(key, 30 * SECOND);
		second.release();
		assertTtl(key, 20 * SECOND);

		this.clock.advance(Duration.ofSeconds(5));
		limiter.renewAll();
		assertTtl(key, 30 * SECOND);
		first.release();
		assertThat(this.redis.hasKey(key)).as("no holders, no key").isFalse();
	}

	@Test
	void semaphoreWhoseHoldersAllExpiredLeavesNoKey() {
		DistributedConcurrencyLimiter dying = limiter();
		dying.acquire(this.one, "k");
		dying.close();
		this.clock.advance(Duration.ofSeconds(30));

		// Any write drops the expired holder, and an empty sorted set is no key.
		RedisPermitStore store = new RedisPermitStore(connectionFactory, this.clock);
		store.release(this.one, key(this.one, "k"), "nobody");
		assertThat(this.redis.hasKey(key(this.one, "k"))).isFalse();
	}

	@Test
	void acquireWithAnIdStillHeldTakesNoSecondPermit() {
		ConcurrencyPolicy two = policy("two", 2);
		RedisPermitStore store = new RedisPermitStore(connectionFactory, this.clock);
		String key = key(two, "k");

		assertThat(store.tryAcquire(two, key, "a")).isEqualTo(new PermitStore.Attempt(true, 1, 0));
		this.clock.advance(Duration.ofSeconds(5));
		assertThat(store.tryAcquire(two, key, "a")).as("a retry after a lost reply")
			.isEqualTo(new PermitStore.Attempt(true, 1, 0));
		assertThat(store.tryAcquire(two, key, "b")).isEqualTo(new PermitStore.Attempt(true, 2, 0));
		assertThat(store.tryAcquire(two, key, "c")).as("refused until a's renewed lease ends")
			.isEqualTo(new PermitStore.Attempt(false, 2, 30 * SECOND));
	}

	@Test
	void scriptRefusesBadInputBeforeWriting() {
		String key = key(this.one, "k");
		new RedisPermitStore(connectionFactory, this.clock).tryAcquire(this.one, key, "a");
		Double before = this.redis.opsForZSet().score(key, "a");
		// Later than the lease: a script that wrote before checking would drop "a".
		String later = Long.toString(this.clock.currentTimeMicros() + 60 * SECOND);

		assertRefused(key, "unknown semaphore operation: take", "take", later, "b", "1", "10");
		assertRefused(key, "permits must be a whole number", "acquire", later, "b", "0", "10");
		assertRefused(key, "permits must be a whole number", "acquire", later, "b", "1.5", "10");
		assertRefused(key, "lease must be a whole number", "renew", later, "a", "0", "-5");
		assertRefused(key, "needs a permit id", "release", later, "", "0", "0");
		assertThat(this.redis.opsForZSet().score(key, "a")).isEqualTo(before);
	}

	@Test
	void scheduledRenewalsKeepAPermitPastItsLeaseOnTheServerClock() throws InterruptedException {
		// Real time here: the renewal thread runs every 100 ms against a 300 ms lease of the server's clock.
		ConcurrencyPolicy shortLease = ConcurrencyPolicy.builder("short")
			.permits(1)
			.scope(ConcurrencyPolicy.Scope.DISTRIBUTED)
			.permitTtl(Duration.ofMillis(300))
			.build();
		CountDownLatch renewals = new CountDownLatch(5);
		RedisPermitStore redisStore = new RedisPermitStore(connectionFactory);
		PermitStore counting = new ForwardingPermitStore(redisStore) {

			@Override
			public boolean renew(ConcurrencyPolicy policy, String key, String id) {
				boolean held = super.renew(policy, key, id);
				if (held) {
					renewals.countDown();
				}
				return held;
			}

		};
		DistributedConcurrencyLimiter limiter = track(new DistributedConcurrencyLimiter(counting, this.keys, null));
		Permit permit = limiter.acquire(shortLease, "k");

		assertThat(renewals.await(10, TimeUnit.SECONDS)).as("five renewals, 500 ms into a 300 ms lease").isTrue();
		assertThat(limiter.inUse(shortLease, "k")).isEqualTo(1);
		permit.release();
		assertThat(limiter.inUse(shortLease, "k")).isZero();
	}

	private void assertRefused(String key, String message, String... arguments) {
		assertThatThrownBy(() -> this.redis.execute(LuaScripts.semaphore().eval(), List.of(key), (Object[]) arguments))
			.isInstanceOf(DataAccessException.class)
			.rootCause()
			.hasMessageContaining(message);
	}

	private void assertTtl(String key, long micros) {
		// With explicit time the TTL is measured from the script's now, exact to the millisecond.
		Long ttl = this.redis.getExpire(key, TimeUnit.MILLISECONDS);
		assertThat(ttl).as("PTTL of %s", key).isBetween(micros / 1000 - 100, micros / 1000);
	}

	private String key(ConcurrencyPolicy policy, String value) {
		// As DistributedConcurrencyLimiter names it.
		return this.keys.build("concurrency:" + policy.name(), value);
	}

	private DistributedConcurrencyLimiter limiter() {
		return track(DistributedLimitersForTests.create(new RedisPermitStore(connectionFactory, this.clock), this.keys,
				null, this.clock, (micros) -> {
					throw new AssertionError("a policy without max-wait never sleeps");
				}, null));
	}

	private DistributedConcurrencyLimiter track(DistributedConcurrencyLimiter limiter) {
		this.limiters.add(limiter);
		return limiter;
	}

	private static ConcurrencyPolicy policy(String name, int permits) {
		return ConcurrencyPolicy.builder(name)
			.permits(permits)
			.scope(ConcurrencyPolicy.Scope.DISTRIBUTED)
			.permitTtl(Duration.ofSeconds(30))
			.build();
	}

}
