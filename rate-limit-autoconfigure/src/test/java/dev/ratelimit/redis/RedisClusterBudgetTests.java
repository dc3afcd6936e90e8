package dev.ratelimit.redis;

import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.support.RedisClusterFixture;

import static dev.ratelimit.redis.BudgetComparison.one;
import static dev.ratelimit.redis.BudgetStoreConformanceTests.CENT;
import static dev.ratelimit.redis.BudgetStoreConformanceTests.HOUR;
import static dev.ratelimit.redis.BudgetStoreConformanceTests.MORNING;
import static dev.ratelimit.redis.BudgetStoreConformanceTests.budget;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Budgets on a three-master Redis Cluster: the three keys of a budget key
 * share its hash tag, so each operation is one script on one node (no
 * {@code CROSSSLOT}), and budgets whose keys live on different masters decide
 * as the in-memory store does.
 */
class RedisClusterBudgetTests {

	private static final RedisClusterFixture cluster = RedisClusterFixture.shared();

	private final LimitKeys keys = new LimitKeys("rl", 128);

	private LettuceConnectionFactory factory;

	@BeforeEach
	void setUp() {
		cluster.flushAll();
		this.factory = cluster.newConnectionFactory();
	}

	@AfterEach
	void tearDown() {
		this.factory.destroy();
	}

	@Test
	void keysOfABudgetKeyShareOneSlot() {
		for (String tenant : List.of("tenant-1", "a{b}c", "}{", "", "x".repeat(500))) {
			String key = this.keys.build("budget:tenant", tenant);
			Set<Integer> slots = new HashSet<>();
			for (String redisKey : RedisBudgetStore.redisKeys(key)) {
				slots.add(ClusterSlotHashUtil.calculateSlot(redisKey));
			}
			assertThat(slots).as("slots of %s", key).hasSize(1);
		}
	}

	@Test
	void budgetsOnEveryMasterDecideAsInMemory() {
		BudgetPolicy policy = budget("day", "1.00", Duration.ofMinutes(5));
		BudgetComparison budgets = new BudgetComparison(this.factory, MORNING);
		Set<Integer> masters = new HashSet<>();
		for (int i = 0; i < 12; i++) {
			String key = this.keys.build("budget:" + policy.name(), "tenant-" + i);
			budgets.reserve(policy, key, "a", 60 * CENT);
			budgets.settle(policy, key, "a", 70 * CENT);
			assertThat(budgets.reserve(policy, key, "b", 40 * CENT))
				.isEqualTo(one(false, 70 * CENT, 0, 30 * CENT, 14 * HOUR, 14 * HOUR));
			int owner = owner(key);
			masters.add(owner);
			assertThat(cluster.call(owner, "EXISTS", key, key + ":d")).as("keys of %s on its master", key)
				.isEqualTo(":2");
		}
		assertThat(masters).as("masters used").hasSize(3);
	}

	@Test
	void randomSequenceOnTheClusterAgrees() {
		BudgetPolicy policy = BudgetPolicy.builder("tenant")
			.limit("day", "50.00")
			.limit("30m", "2.00")
			.reservationTimeout(Duration.ofMinutes(2))
			.build();
		BudgetComparison budgets = new BudgetComparison(this.factory, Instant.parse("2026-01-31T20:00:00Z"));
		int[] outcomes = BudgetStoreConformanceTests.playRandom(budgets, policy,
				this.keys.build("budget:" + policy.name(), "tenant-1"), 500, 31L);
		assertThat(outcomes[0]).as("admitted").isPositive();
		assertThat(outcomes[1]).as("refused").isPositive();
	}

	/** The master owning a key: slots are split evenly and in order, see {@link RedisClusterFixture}. */
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
