package dev.ratelimit.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.ratelimit.core.Acquisition;
import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.support.RedisClusterFixture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Redis backend on a real three-master Redis Cluster: every algorithm
 * decides there as it does in memory; a layered decision whose keys live in
 * different slots (and on different nodes) runs slot by slot without a
 * {@code CROSSSLOT} error, stays all or nothing by refunding, and agrees with
 * the in-memory backend decision for decision; keys sharing a hash tag are
 * still one script call.
 */
class RedisClusterTests {

	private static final long MILLI = 1_000L;

	private static final RedisClusterFixture cluster = RedisClusterFixture.shared();

	private static LettuceConnectionFactory connectionFactory;

	private final LimitKeys keys = new LimitKeys("rl", 128);

	@BeforeAll
	static void connect() {
		connectionFactory = cluster.newConnectionFactory();
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@BeforeEach
	void flush() {
		cluster.flushAll();
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void everyAlgorithmDecidesOnTheCluster(Algorithm algorithm) {
		RateLimitPolicy policy = fastPolicy("on-cluster", algorithm, 5);
		BackendComparison backends = new BackendComparison(connectionFactory);
		for (int node = 0; node < 3; node++) {
			int allowed = backends.playRandom(policy, this.keys.build(policy.name(), tagOnNode(node)), 250 * MILLI,
					100, node);
			assertThat(allowed).isBetween(10, 95);
		}
		// And on the nodes' own clocks.
		RedisRateLimitBackend serverTime = new RedisRateLimitBackend(connectionFactory);
		assertThat(serverTime.tryConsume(policy, this.keys.build(policy.name(), "server-time"), 1))
			.extracting(Decision::allowed, Decision::remaining)
			.containsExactly(true, 4L);
	}

	@Test
	void layeredDecisionAcrossNodesIsAllOrNothing() {
		BackendComparison backends = new BackendComparison(connectionFactory);
		StringRedisTemplate redis = backends.redis();
		Acquisition perUser = acquisition(policy("per-user", Algorithm.TOKEN_BUCKET, 3), tagOnNode(0), 1);
		Acquisition perIp = acquisition(policy("per-ip", Algorithm.FIXED_WINDOW, 3), tagOnNode(1), 1);
		Acquisition global = acquisition(policy("global", Algorithm.SLIDING_WINDOW_LOG, 1), tagOnNode(2), 1);
		assertThat(backends.decideAllAt(0, List.of(perUser, perIp))).allMatch(Decision::allowed);
		Map<String, Object> before = dump(redis, perUser.key(), perIp.key());
		assertThat(backends.decideAt(0, global.policy(), global.key(), 1).allowed()).isTrue();

		// Decided per node in order: both earlier nodes take, the third denies, both are refunded.
		List<Decision> decisions = backends.decideAllAt(0, List.of(perUser, perIp, global));

		assertThat(decisions).extracting(Decision::allowed).containsExactly(true, true, false);
		assertThat(decisions).extracting(Decision::remaining).containsExactly(2L, 2L, 0L);
		assertThat(dump(redis, perUser.key(), perIp.key())).isEqualTo(before);
		// From empty state: a refund leaves no key at all.
		Acquisition fresh = acquisition(policy("fresh", Algorithm.SLIDING_WINDOW_COUNTER, 3), tagOnNode(0), 2);
		assertThat(backends.decideAllAt(0, List.of(fresh, global))).extracting(Decision::allowed)
			.containsExactly(true, false);
		assertThat(redis.hasKey(fresh.key())).isFalse();
	}

	@Test
	void layeredDecisionsAcrossSlotsAgreeWithTheInMemoryBackendOverARandomTimeline() {
		BackendComparison backends = new BackendComparison(connectionFactory);
		List<Acquisition> acquisitions = new ArrayList<>();
		Algorithm[] algorithms = Algorithm.values();
		for (int i = 0; i < algorithms.length; i++) {
			RateLimitPolicy policy = fastPolicy("layer-" + i, algorithms[i], 3 + i);
			acquisitions.add(acquisition(policy, tagOnNode(i % 3), 1));
		}
		int allowed = backends.playRandomLayered(acquisitions, 250 * MILLI, 300, 20260104L);
		assertThat(allowed).isBetween(30, 270);
	}

	@Test
	void layeredDecisionWithinOneHashTagIsOneScriptCall() {
		RedisRateLimitBackend backend = new RedisRateLimitBackend(connectionFactory);
		String tag = "user-7";
		List<Acquisition> call = List.of(acquisition(policy("a", Algorithm.TOKEN_BUCKET, 5), tag, 1),
				acquisition(policy("b", Algorithm.SLIDING_WINDOW_LOG, 5), tag, 1),
				acquisition(policy("c", Algorithm.LEAKY_BUCKET_SHAPING, 5), tag, 1));
		backend.tryConsumeAll(call);
		List<LettuceConnectionFactory> nodes = nodeConnectionFactories();
		try {
			nodes.forEach(CommandStats::reset);
			assertThat(backend.tryConsumeAll(call)).allMatch(Decision::allowed);
			assertThat(nodes.stream().mapToLong((node) -> CommandStats.calls(node, "fcall")).sum()).isOne();
			assertThat(nodes.stream().mapToLong((node) -> CommandStats.calls(node, "evalsha")).sum()).isZero();
			assertThat(nodes.stream().mapToLong((node) -> CommandStats.calls(node, "eval")).sum()).isZero();
		}
		finally {
			nodes.forEach(LettuceConnectionFactory::destroy);
		}
	}

	@Test
	void layeredDecisionAcrossNodesOnTheServersClocks() {
		RedisRateLimitBackend backend = new RedisRateLimitBackend(connectionFactory);
		Acquisition first = acquisition(policy("first", Algorithm.TOKEN_BUCKET, 2), tagOnNode(0), 1);
		Acquisition second = acquisition(policy("second", Algorithm.SLIDING_WINDOW_LOG, 1), tagOnNode(1), 1);
		assertThat(backend.tryConsumeAll(List.of(first, second))).allMatch(Decision::allowed);
		List<Decision> denied = backend.tryConsumeAll(List.of(first, second));
		assertThat(denied).extracting(Decision::allowed).containsExactly(true, false);
		// The refund gave the token back: one left, not zero.
		assertThat(denied.get(0).remaining()).isOne();
	}

	private Acquisition acquisition(RateLimitPolicy policy, String tag, long cost) {
		return new Acquisition(policy, this.keys.build(policy.name(), tag), cost);
	}

	private static RateLimitPolicy policy(String name, Algorithm algorithm, long capacity) {
		RateLimitPolicy.Builder builder = RateLimitPolicy.builder(name).algorithm(algorithm).capacity(capacity);
		// Slow enough that the server-clock tests see no refill.
		return algorithm.isRateBased() ? builder.refill(capacity + "/1h").build() : builder.window("1h").build();
	}

	/** A policy that refills or slides within a second, for timelines on the manual clock. */
	private static RateLimitPolicy fastPolicy(String name, Algorithm algorithm, long capacity) {
		RateLimitPolicy.Builder builder = RateLimitPolicy.builder(name).algorithm(algorithm).capacity(capacity);
		return algorithm.isRateBased() ? builder.refill("3/1s").build() : builder.window("1s").build();
	}

	/** A hash tag whose slot the fixture's {@code node}-th master owns. */
	private static String tagOnNode(int node) {
		for (int i = 0;; i++) {
			String tag = "n" + node + "-" + i;
			int slot = ClusterSlotHashUtil.calculateSlot("{" + tag + "}");
			int owner = (slot <= 5460) ? 0 : (slot <= 10921) ? 1 : 2;
			if (owner == node) {
				return tag;
			}
		}
	}

	private static List<LettuceConnectionFactory> nodeConnectionFactories() {
		List<LettuceConnectionFactory> nodes = new ArrayList<>();
		for (int port : cluster.ports()) {
			LettuceConnectionFactory node = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration("127.0.0.1", port));
			node.afterPropertiesSet();
			node.start();
			nodes.add(node);
		}
		return nodes;
	}

	private static Map<String, Object> dump(StringRedisTemplate redis, String... keys) {
		Map<String, Object> state = new TreeMap<>();
		for (String key : keys) {
			// A bucket's state and a window's are one string each (null once deleted).
			state.put(key, redis.opsForValue().get(key));
		}
		return state;
	}

}
