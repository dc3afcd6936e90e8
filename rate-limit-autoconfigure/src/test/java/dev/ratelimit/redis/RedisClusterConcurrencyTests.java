package dev.ratelimit.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.concurrency.ConcurrencyLimitExceededException;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.concurrency.DistributedConcurrencyLimiter;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.support.RedisClusterFixture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Distributed caps on a three-master Redis Cluster, on the servers' clocks:
 * each key's semaphore is one Redis key on its own master, and caps whose keys
 * live on different masters take, refuse, renew and release permits as on a
 * single server.
 */
class RedisClusterConcurrencyTests {

	private static final RedisClusterFixture cluster = RedisClusterFixture.shared();

	private final LimitKeys keys = new LimitKeys("rl", 128);

	private final ConcurrencyPolicy policy = ConcurrencyPolicy.builder("provider")
		.permits(2)
		.scope(ConcurrencyPolicy.Scope.DISTRIBUTED)
		.permitTtl(Duration.ofSeconds(30))
		.build();

	private LettuceConnectionFactory factory;

	private DistributedConcurrencyLimiter limiter;

	@BeforeEach
	void setUp() {
		cluster.flushAll();
		this.factory = cluster.newConnectionFactory();
		this.limiter = new DistributedConcurrencyLimiter(new RedisPermitStore(this.factory), this.keys, null);
	}

	@AfterEach
	void tearDown() {
		this.limiter.close();
		this.factory.destroy();
	}

	@Test
	void capsOnEveryMasterTakeRefuseRenewAndRelease() {
		Set<Integer> masters = new HashSet<>();
		for (int i = 0; i < 12; i++) {
			String tenant = "tenant-" + i;
			List<Permit> permits = new ArrayList<>();
			permits.add(this.limiter.acquire(this.policy, tenant));
			permits.add(this.limiter.acquire(this.policy, tenant));
			assertThatExceptionOfType(ConcurrencyLimitExceededException.class)
				.isThrownBy(() -> this.limiter.acquire(this.policy, tenant));
			this.limiter.renewAll();

			// As DistributedConcurrencyLimiter names it.
			String key = this.keys.build("concurrency:" + this.policy.name(), tenant);
			int owner = owner(key);
			masters.add(owner);
			assertThat(cluster.call(owner, "ZCARD", key)).as("holders of %s on its master", key).isEqualTo(":2");

			permits.forEach(Permit::release);
			assertThat(this.limiter.inUse(this.policy, tenant)).isZero();
			assertThat(cluster.call(owner, "EXISTS", key)).isEqualTo(":0");
		}
		assertThat(masters).as("masters used").hasSize(3);
	}

	@Test
	void sharedPermitsWithoutAKeyWorkOnTheCluster() {
		Permit permit = this.limiter.acquire(this.policy, null);
		assertThat(this.limiter.inUse(this.policy, null)).isEqualTo(1);
		permit.release();
		assertThat(this.limiter.inUse(this.policy, null)).isZero();
	}

	private static int owner(String key) {
		int slot = ClusterSlotHashUtil.calculateSlot(key);
		List<Integer> ports = cluster.ports();
		int node = 0;
		while ((node + 1) * RedisClusterFixture.SLOTS / ports.size() <= slot) {
			node++;
		}
		return ports.get(node);
	}

}
