package dev.ratelimit.redis;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.concurrency.ConcurrencyLimitExceededException;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.concurrency.DistributedConcurrencyLimiter;
import dev.ratelimit.concurrency.DistributedLimitersForTests;
import dev.ratelimit.concurrency.LocalConcurrencyLimiter;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.concurrency.PermitStore;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.RateLimitBackendUnavailableException;
import dev.ratelimit.core.Sleeper;
import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.support.RefusingRedis;
import dev.ratelimit.support.RedisServerFixture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * Distributed caps whose Redis refuses connections: open lets the call run
 * without a permit, closed refuses it as unavailable, local caps it in this
 * instance. Renewals and releases that fail never break the call: the lease
 * covers the outage or frees the permit when it ends.
 */
class DistributedConcurrencyFailureModeTests {

	private static final RedisServerFixture server = RedisServerFixture.shared();

	private final LettuceConnectionFactory deadRedis = RefusingRedis.connectionFactory();

	private final ManualTimeSource clock = new ManualTimeSource();

	private final LimitKeys keys = new LimitKeys("rl", 128);

	private final LocalConcurrencyLimiter local = new LocalConcurrencyLimiter(100);

	private final DistributedConcurrencyLimiter limiter = DistributedLimitersForTests.create(
			new RedisPermitStore(this.deadRedis, this.clock), this.keys, this.local, this.clock, neverSleeps(), null);

	@AfterEach
	void close() {
		this.limiter.close();
		this.deadRedis.destroy();
	}

	@Test
	void openCapLetsEveryCallRunWithoutAPermit() {
		ConcurrencyPolicy open = policy("open", FailureMode.OPEN);
		for (int i = 0; i < 5; i++) {
			Permit permit = this.limiter.acquire(open, "k");
			assertThatNoException().isThrownBy(permit::release);
		}
		assertThat(this.local.inUse(open, "k")).as("nothing counted locally").isZero();
	}

	@Test
	void closedCapRefusesTheCallAsUnavailable() {
		ConcurrencyPolicy closed = policy("closed", FailureMode.CLOSED);
		assertThatExceptionOfType(RateLimitBackendUnavailableException.class)
			.isThrownBy(() -> this.limiter.acquire(closed, "k"))
			.satisfies((ex) -> assertThat(ex.getPolicy()).isEqualTo("closed"))
			.withCauseInstanceOf(RedisConnectionFailureException.class);
	}

	@Test
	void localCapCountsInThisInstanceWhileRedisIsDown() {
		ConcurrencyPolicy local = policy("local", FailureMode.LOCAL);
		Permit first = this.limiter.acquire(local, "k");
		this.limiter.acquire(local, "k");
		assertThat(this.local.inUse(local, "k")).isEqualTo(2);
		assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
			.isThrownBy(() -> this.limiter.acquire(local, "k"));

		first.release();
		assertThat(this.limiter.acquire(local, "k")).isNotNull();
		assertThat(this.local.inUse(local, "other")).as("per key, as in Redis").isZero();
	}

	@Test
	void localCapWithoutALocalLimiterRunsAsOpen() {
		DistributedConcurrencyLimiter withoutLocal = DistributedLimitersForTests.create(
				new RedisPermitStore(this.deadRedis, this.clock), this.keys, null, this.clock, neverSleeps(), null);
		ConcurrencyPolicy local = policy("local", FailureMode.LOCAL);
		try {
			for (int i = 0; i < 5; i++) {
				assertThat(withoutLocal.acquire(local, "k")).isNotNull();
			}
		}
		finally {
			withoutLocal.close();
		}
	}

	@Test
	void permitOutlivesFailedRenewalsAndSurvivesAFailedRelease() {
		LettuceConnectionFactory connectionFactory = server.newConnectionFactory();
		server.flushAll();
		AtomicBoolean redisDown = new AtomicBoolean();
		AtomicInteger renewals = new AtomicInteger();
		PermitStore flaky = new ForwardingPermitStore(new RedisPermitStore(connectionFactory, this.clock)) {

			@Override
			public boolean renew(ConcurrencyPolicy policy, String key, String id) {
				renewals.incrementAndGet();
				failIfDown();
				return super.renew(policy, key, id);
			}

			@Override
			public void release(ConcurrencyPolicy policy, String key, String id) {
				failIfDown();
				super.release(policy, key, id);
			}

			private void failIfDown() {
				if (redisDown.get()) {
					throw new RedisConnectionFailureException("down");
				}
			}

		};
		ConcurrencyPolicy policy = policy("flaky", FailureMode.CLOSED);
		DistributedConcurrencyLimiter flakyLimiter = DistributedLimitersForTests.create(flaky, this.keys, null,
				this.clock, neverSleeps(), null);
		try {
			Permit permit = flakyLimiter.acquire(policy, "k");
			redisDown.set(true);
			this.clock.advance(Duration.ofSeconds(10));
			flakyLimiter.renewAll();
			redisDown.set(false);
			this.clock.advance(Duration.ofSeconds(10));
			flakyLimiter.renewAll();
			this.clock.advance(Duration.ofSeconds(25));

			assertThat(renewals).as("a failed renewal keeps the permit in the renewal set").hasValue(2);
			assertThat(flakyLimiter.inUse(policy, "k")).as("renewed at 20s, held at 45s").isEqualTo(1);
			redisDown.set(true);
			assertThatNoException().isThrownBy(permit::release);
			redisDown.set(false);
			flakyLimiter.renewAll();
			assertThat(renewals).as("a released permit is no longer renewed").hasValue(2);
			this.clock.advance(Duration.ofSeconds(30));
			assertThat(flakyLimiter.inUse(policy, "k")).as("the lease frees what the release could not").isZero();
		}
		finally {
			flakyLimiter.close();
			connectionFactory.destroy();
		}
	}

	@Test
	void storeFailureIsASpringDataAccessException() {
		RedisPermitStore store = new RedisPermitStore(this.deadRedis, this.clock);
		assertThatExceptionOfType(DataAccessException.class)
			.isThrownBy(() -> store.tryAcquire(policy("x", FailureMode.OPEN), "rl:x:{k}", "id"));
	}

	private static ConcurrencyPolicy policy(String name, FailureMode failureMode) {
		return ConcurrencyPolicy.builder(name)
			.permits(2)
			.scope(ConcurrencyPolicy.Scope.DISTRIBUTED)
			.permitTtl(Duration.ofSeconds(30))
			.failureMode(failureMode)
			.build();
	}

	private static Sleeper neverSleeps() {
		return (micros) -> {
			throw new AssertionError("no wait expected");
		};
	}

}
