package dev.ratelimit.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.DataType;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.ZSetOperations.TypedTuple;

import dev.ratelimit.core.Acquisition;
import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Layered decisions on a standalone Redis: several policies, all or nothing, in
 * one {@code EVALSHA} whatever their hash tags; and, through a connection
 * factory the backend must treat as a cluster, slot by slot with refunds,
 * still deciding exactly as the in-memory backend does.
 */
class LayeredDecisionTests extends ScriptTestSupport {

	private static final String DENYING_KEY = "rl:deny:{elsewhere}";

	@Test
	void threePoliciesWithDifferentHashTagsAreOneScriptCall() {
		RedisRateLimitBackend backend = new RedisRateLimitBackend(connectionFactory);
		RateLimitPolicy global = RateLimitPolicy.builder("global")
			.algorithm(Algorithm.SLIDING_WINDOW_LOG)
			.capacity(4)
			.window("1h")
			.build();
		List<Acquisition> call = List.of(acquisition(policy("per-user", Algorithm.TOKEN_BUCKET, 5), "user-1", 1),
				acquisition(policy("per-ip", Algorithm.FIXED_WINDOW, 5), "203.0.113.7", 1),
				acquisition(global, "all", 1));
		assertThat(call).extracting((acquisition) -> ClusterSlotHashUtil.calculateSlot(acquisition.key()))
			.doesNotHaveDuplicates();
		backend.tryConsumeAll(call);
		CommandStats.reset(connectionFactory);
		for (int i = 0; i < 3; i++) {
			assertThat(backend.tryConsumeAll(call)).allMatch(Decision::allowed);
		}
		assertThat(CommandStats.calls(connectionFactory, "fcall")).isEqualTo(3);
		assertThat(CommandStats.calls(connectionFactory, "evalsha")).isZero();
		assertThat(CommandStats.calls(connectionFactory, "eval")).isZero();
		// The fifth call is denied by the log of 4, in the same single call.
		assertThat(backend.tryConsumeAll(call)).extracting(Decision::allowed).containsExactly(true, true, false);
		assertThat(CommandStats.calls(connectionFactory, "fcall")).isEqualTo(4);
	}

	@Test
	void denialByOnePolicyTakesNothingFromTheOthers() {
		RateLimitPolicy perUser = policy("per-user", Algorithm.TOKEN_BUCKET, 5);
		RateLimitPolicy perIp = policy("per-ip", Algorithm.FIXED_WINDOW, 2);
		RateLimitPolicy global = policy("global", Algorithm.SLIDING_WINDOW_LOG, 1);
		List<Acquisition> call = List.of(acquisition(perUser, "user-1", 1), acquisition(perIp, "203.0.113.7", 1),
				acquisition(global, "all", 1));
		assertThat(this.backends.decideAllAt(0, call)).containsExactly(new Decision(true, 4, 5, 200_000, 0),
				new Decision(true, 1, 2, 1_000_000, 0), new Decision(true, 0, 1, 1_000_000, 0));
		// The global log denies: the others report their state with nothing taken
		// (4.5 tokens after 100 ms at 5 per second).
		assertThat(this.backends.decideAllAt(100_000, call)).containsExactly(new Decision(true, 4, 5, 100_000, 0),
				new Decision(true, 1, 2, 900_000, 0), new Decision(false, 0, 1, 900_000, 900_000));
		assertThat(this.backends.storedNumbers(call.get(0).key()).get(0)).isEqualTo("800000");
		assertThat(this.backends.storedNumbers(call.get(1).key()).get(3)).isEqualTo("1");
		assertThat(this.backends.redis().opsForZSet().size(call.get(2).key())).isEqualTo(2);
	}

	@Test
	void everyAlgorithmTogetherAgreesWithTheInMemoryBackendOverARandomTimeline() {
		int allowed = this.backends.playRandomLayered(everyAlgorithm("user-1", "user-1", "203.0.113.7"),
				250 * MILLI, 400, 20260102L);
		assertThat(allowed).isBetween(40, 360);
	}

	@Test
	void slotBySlotDecisionsAgreeWithAllOrNothingOverARandomTimeline() {
		BackendComparison slotBySlot = new BackendComparison(new OpaqueConnectionFactory(connectionFactory),
				connectionFactory);
		// Three tags: three slots, two policies in each.
		int allowed = slotBySlot.playRandomLayered(everyAlgorithm("user-1", "203.0.113.7", "tenant-9"), 250 * MILLI,
				400, 20260103L);
		assertThat(allowed).isBetween(40, 360);
	}

	@ParameterizedTest
	@EnumSource(Algorithm.class)
	void denialInALaterSlotRestoresTheStateAnEarlierSlotTook(Algorithm algorithm) {
		ManualTimeSource clock = new ManualTimeSource(BackendComparison.START_MICROS);
		RedisRateLimitBackend backend = new RedisRateLimitBackend(new OpaqueConnectionFactory(connectionFactory),
				clock);
		StringRedisTemplate redis = new StringRedisTemplate(connectionFactory);
		RateLimitPolicy policy = policy("earlier", algorithm, 3);
		Acquisition earlier = acquisition(policy, "user-1", 1);
		Acquisition denying = denying();
		assertThat(ClusterSlotHashUtil.calculateSlot(earlier.key()))
			.isNotEqualTo(ClusterSlotHashUtil.calculateSlot(denying.key()));
		Decision before = backend.tryConsume(policy, earlier.key(), 1);
		Object stateBefore = dump(redis, earlier.key());

		List<Decision> decisions = backend.tryConsumeAll(List.of(earlier, denying));

		assertThat(decisions.get(1).allowed()).isFalse();
		assertThat(decisions.get(0)).as("reported with nothing taken")
			.isEqualTo(backend.tryConsumeAll(List.of(new Acquisition(policy, earlier.key(), 0))).get(0));
		assertThat(decisions.get(0).remaining()).isEqualTo(before.remaining());
		assertThat(dump(redis, earlier.key())).as("state after the refund").isEqualTo(stateBefore);
		// Denied first, the later slot is only looked at.
		backend.tryConsumeAll(List.of(denying, earlier));
		assertThat(dump(redis, earlier.key())).isEqualTo(stateBefore);
	}

	@Test
	void slotBySlotCountsOneScriptCallPerSlotAndOneRefundPerSlotTaken() {
		RedisRateLimitBackend backend = new RedisRateLimitBackend(new OpaqueConnectionFactory(connectionFactory),
				new ManualTimeSource(BackendComparison.START_MICROS));
		Acquisition first = acquisition(policy("first", Algorithm.TOKEN_BUCKET, 5), "user-1", 1);
		Acquisition second = acquisition(policy("second", Algorithm.FIXED_WINDOW, 5), "203.0.113.7", 1);
		Acquisition third = acquisition(policy("third", Algorithm.SLIDING_WINDOW_COUNTER, 5), "tenant-9", 1);
		assertThat(List.of(first, second, third, denying()))
			.extracting((acquisition) -> ClusterSlotHashUtil.calculateSlot(acquisition.key()))
			.doesNotHaveDuplicates();
		// Warm both scripts up, so that no EVAL fallback counts below.
		backend.tryConsumeAll(List.of(first, denying()));
		CommandStats.reset(connectionFactory);
		assertThat(backend.tryConsumeAll(List.of(first, second, third))).allMatch(Decision::allowed);
		assertThat(CommandStats.calls(connectionFactory, "evalsha")).isEqualTo(3);
		CommandStats.reset(connectionFactory);
		List<Decision> denied = backend.tryConsumeAll(List.of(first, second, denying(), third));
		assertThat(denied).extracting(Decision::allowed).containsExactly(true, true, false, true);
		// Three slots decided, two refunded, the last one looked at.
		assertThat(CommandStats.calls(connectionFactory, "evalsha")).isEqualTo(6);
		// Each reports its state with this call's cost given back or never taken.
		assertThat(denied).extracting(Decision::remaining).containsExactly(4L, 4L, 0L, 4L);
	}

	/** A token bucket of 1 that is already empty, in its own slot. */
	private Acquisition denying() {
		RateLimitPolicy policy = RateLimitPolicy.builder("deny").capacity(1).refill("1/1h").build();
		StringRedisTemplate redis = new StringRedisTemplate(connectionFactory);
		redis.opsForHash().putAll(DENYING_KEY, Map.of("t", "0", "ts", "9007199254740991"));
		return new Acquisition(policy, DENYING_KEY, 1);
	}

	private List<Acquisition> everyAlgorithm(String firstTag, String secondTag, String thirdTag) {
		List<Acquisition> acquisitions = new ArrayList<>();
		String[] tags = { firstTag, secondTag, thirdTag };
		Algorithm[] algorithms = Algorithm.values();
		for (int i = 0; i < algorithms.length; i++) {
			RateLimitPolicy policy = policy(algorithms[i].name().toLowerCase().replace('_', '-'), algorithms[i],
					3 + i);
			acquisitions.add(acquisition(policy, tags[i % 3], 1));
		}
		return acquisitions;
	}

	private Acquisition acquisition(RateLimitPolicy policy, String value, long cost) {
		return new Acquisition(policy, this.keys.build(policy.name(), value), cost);
	}

	private static RateLimitPolicy policy(String name, Algorithm algorithm, long capacity) {
		RateLimitPolicy.Builder builder = RateLimitPolicy.builder(name).algorithm(algorithm).capacity(capacity);
		return algorithm.isRateBased() ? builder.refill(capacity + "/1s").build() : builder.window("1s").build();
	}

	/** The stored state, whatever its type, in a form that compares by value. */
	private static Object dump(StringRedisTemplate redis, String key) {
		DataType type = redis.type(key);
		if (type == DataType.HASH) {
			return new TreeMap<>(redis.opsForHash().entries(key));
		}
		if (type == DataType.ZSET) {
			Set<TypedTuple<String>> entries = redis.opsForZSet().rangeWithScores(key, 0, -1);
			List<String> flat = new ArrayList<>();
			entries.forEach((entry) -> flat.add(entry.getValue() + "=" + entry.getScore()));
			return flat;
		}
		return type;
	}

}
