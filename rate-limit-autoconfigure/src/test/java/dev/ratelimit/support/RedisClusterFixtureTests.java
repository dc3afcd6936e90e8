package dev.ratelimit.support;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.ClusterInfo;
import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisClusterNode;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.DefaultRedisScript;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Proves {@link RedisClusterFixture} gives tests a real, healthy three-master
 * cluster, and documents the one cluster rule the product must respect: keys
 * used together must share a hash tag.
 */
class RedisClusterFixtureTests {

	private static final RedisClusterFixture cluster = RedisClusterFixture.shared();

	private static final DefaultRedisScript<Long> SET_BOTH = new DefaultRedisScript<>(
			"redis.call('SET', KEYS[1], ARGV[1]) redis.call('SET', KEYS[2], ARGV[1]) "
					+ "return redis.call('EXISTS', KEYS[1], KEYS[2])",
			Long.class);

	private LettuceConnectionFactory factory;

	private StringRedisTemplate template;

	@BeforeEach
	void setUp() {
		cluster.flushAll();
		this.factory = cluster.newConnectionFactory();
		this.template = new StringRedisTemplate(this.factory);
	}

	@AfterEach
	void tearDown() {
		this.factory.destroy();
	}

	@Test
	void clusterIsHealthyWithThreeMastersCoveringEverySlot() {
		try (RedisClusterConnection connection = this.factory.getClusterConnection()) {
			ClusterInfo info = connection.clusterGetClusterInfo();
			assertThat(info.getState()).isEqualTo("ok");
			assertThat(info.getSlotsAssigned()).isEqualTo(RedisClusterFixture.SLOTS);
			assertThat(info.getSlotsOk()).isEqualTo(RedisClusterFixture.SLOTS);
			assertThat(info.getKnownNodes()).isEqualTo(3);
			assertThat(info.getClusterSize()).isEqualTo(3);

			List<RedisClusterNode> masters = masters(connection);
			assertThat(masters).extracting(RedisClusterNode::getPort)
				.containsExactlyInAnyOrderElementsOf(cluster.ports());
			Set<Integer> covered = new HashSet<>();
			int total = 0;
			for (RedisClusterNode master : masters) {
				total += master.getSlotRange().getSlots().size();
				covered.addAll(master.getSlotRange().getSlots());
			}
			assertThat(total).as("slots owned twice").isEqualTo(RedisClusterFixture.SLOTS);
			assertThat(covered).hasSize(RedisClusterFixture.SLOTS).allMatch((slot) -> slot >= 0 && slot < 16384);
		}
		for (int port : cluster.ports()) {
			assertThat(cluster.call(port, "PING")).isEqualTo("+PONG");
		}
	}

	@Test
	void templateWritesAndReadsKeysThatLiveOnDifferentMasters() {
		List<RedisClusterNode> masters;
		try (RedisClusterConnection connection = this.factory.getClusterConnection()) {
			masters = masters(connection);
		}
		List<String> keys = new ArrayList<>();
		for (RedisClusterNode master : masters) {
			String key = keyOwnedBy(master);
			keys.add(key);
			this.template.opsForValue().set(key, "value-of-" + key);
		}

		for (int i = 0; i < masters.size(); i++) {
			String key = keys.get(i);
			assertThat(this.template.opsForValue().get(key)).isEqualTo("value-of-" + key);
			// The key really is stored on its master, and the other nodes redirect to it.
			int owner = masters.get(i).getPort();
			assertThat(cluster.call(owner, "EXISTS", key)).isEqualTo(":1");
			for (int port : cluster.ports()) {
				if (port != owner) {
					assertThat(cluster.call(port, "EXISTS", key)).startsWith("-MOVED ").endsWith(":" + owner);
				}
			}
		}
	}

	@Test
	void luaScriptOnKeysSharingAHashTagRuns() {
		List<String> keys = List.of("rl:{t}:tokens", "rl:{t}:timestamp");
		assertThat(ClusterSlotHashUtil.calculateSlot(keys.get(0)))
			.isEqualTo(ClusterSlotHashUtil.calculateSlot(keys.get(1)));

		Long existing = this.template.execute(SET_BOTH, keys, "1");

		assertThat(existing).isEqualTo(2L);
		assertThat(this.template.opsForValue().get("rl:{t}:timestamp")).isEqualTo("1");
	}

	@Test
	void luaScriptOnKeysInDifferentSlotsFailsWithCrossSlot() {
		List<String> keys = List.of("rl:{a}:tokens", "rl:{b}:tokens");
		assertThat(ClusterSlotHashUtil.calculateSlot(keys.get(0)))
			.isNotEqualTo(ClusterSlotHashUtil.calculateSlot(keys.get(1)));

		assertThatThrownBy(() -> this.template.execute(SET_BOTH, keys, "1")).isInstanceOf(RedisSystemException.class)
			.rootCause()
			.hasMessageContaining("CROSSSLOT");
		assertThat(this.template.hasKey("rl:{a}:tokens")).isFalse();
	}

	@Test
	void flushAllEmptiesEveryMaster() {
		try (RedisClusterConnection connection = this.factory.getClusterConnection()) {
			for (RedisClusterNode master : masters(connection)) {
				this.template.opsForValue().set(keyOwnedBy(master), "x");
			}
		}
		for (int port : cluster.ports()) {
			assertThat(cluster.call(port, "DBSIZE")).isEqualTo(":1");
		}

		cluster.flushAll();

		for (int port : cluster.ports()) {
			assertThat(cluster.call(port, "DBSIZE")).isEqualTo(":0");
		}
	}

	private static List<RedisClusterNode> masters(RedisClusterConnection connection) {
		List<RedisClusterNode> masters = new ArrayList<>();
		connection.clusterGetNodes().forEach((node) -> {
			if (node.isMaster()) {
				masters.add(node);
			}
		});
		assertThat(masters).hasSize(3);
		return masters;
	}

	private static String keyOwnedBy(RedisClusterNode master) {
		for (int i = 0;; i++) {
			String key = "key-" + i;
			if (master.servesSlot(ClusterSlotHashUtil.calculateSlot(key))) {
				return key;
			}
		}
	}

}
