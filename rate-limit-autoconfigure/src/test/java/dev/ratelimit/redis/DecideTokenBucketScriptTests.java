package dev.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code decide_token_bucket.lua}, the script of one token bucket alone, makes
 * the decisions {@code decide.lua} makes for that bucket, and each reads the
 * state the other wrote: a bucket emptied through {@code decide.lua}, as every
 * decision was sent before the one-bucket script, or by an instance of that
 * build during a rolling upgrade, stays empty, and the other way round. Both
 * scripts replay the same random timeline with explicit times, one on a key
 * of its own and both taking turns on a third key: every reply and every
 * stored state must be the same.
 */
class DecideTokenBucketScriptTests extends SharedRedisTests {

	private static final long NOW = 1_767_225_600_000_000L;

	private ScriptRunner scripts;

	private StringRedisTemplate redis;

	private final PolicyArguments arguments = new PolicyArguments();

	@BeforeEach
	void scripts() {
		this.scripts = new ScriptRunner(connectionFactory);
		this.redis = new StringRedisTemplate(connectionFactory);
	}

	@Test
	void bothScriptsDecideAlikeAndReadEachOthersState() {
		List<RateLimitPolicy> policies = List.of(bucket(5, "5/1h", 0), bucket(3, "2/1s", 0),
				bucket(4, "1/1s", 2_500_000L), bucket(1_000_000_000L, "1000000000/1s", 0));
		Random random = new Random(20261202L);
		for (RateLimitPolicy policy : policies) {
			String several = "rl:{decide}:" + policy.name();
			String one = "rl:{one}:" + policy.name();
			String turns = "rl:{turns}:" + policy.name();
			// Steps of up to half a token's refill, at least a millisecond: buckets empty, refill and fill up.
			long step = Math.max(1_000L, policy.refill().periodMicros() / 2);
			long now = NOW;
			for (int i = 0; i < 400; i++) {
				now += (random.nextInt(4) == 0) ? 0 : random.nextLong(step + 1);
				long cost = (random.nextInt(5) == 0) ? random.nextLong(policy.capacity() + 1) : 1;
				List<Object> expected = decide(several, policy, cost, now);
				assertThat(decideOne(one, policy, cost, now, true)).as("decision %d of %s", i, policy)
					.isEqualTo(expected);
				if (i % 2 == 0) {
					assertThat(decide(turns, policy, cost, now)).as("decision %d of %s, the scripts taking turns", i, policy)
						.isEqualTo(expected);
				}
				else {
					// Not asked for, the receipt is left out; the decision and the state are the same.
					List<Object> withoutReceipt = decideOne(turns, policy, cost, now, false);
					assertThat(withoutReceipt.subList(0, 5)).as("decision %d of %s, the scripts taking turns", i, policy)
						.isEqualTo(expected.subList(0, 5));
					assertThat(withoutReceipt.get(5)).isEqualTo("");
				}
				String stored = this.redis.opsForValue().get(several);
				assertThat(this.redis.opsForValue().get(one)).isEqualTo(stored);
				assertThat(this.redis.opsForValue().get(turns)).isEqualTo(stored);
			}
		}
	}

	@Test
	void aBucketEmptiedThroughDecideStaysEmpty() {
		RateLimitPolicy policy = bucket(5, "5/1h", 0);
		String key = "rl:{emptied}";
		assertThat(decide(key, policy, 5, NOW).get(0)).isEqualTo(1L);
		List<Object> refused = decideOne(key, policy, 1, NOW + 1, false);
		assertThat(refused.get(0)).isEqualTo(0L);
		// One token back a fifth of an hour after it was emptied.
		assertThat(refused.get(3)).isEqualTo(720_000_000L - 1);
		assertThat(decideOne(key, policy, 1, NOW + 720_000_000L, false).get(0)).isEqualTo(1L);
	}

	@Test
	void withoutATimeTheServersClockDecides() {
		RateLimitPolicy policy = bucket(5, "5/1h", 0);
		String text = new String(this.arguments.of(policy).tokenBucket(), StandardCharsets.US_ASCII);
		String key = "rl:{server-time}";
		long before = serverMicros();
		// As production sends it: two arguments; then with an empty time, asking for the receipt.
		List<Object> first = this.scripts.run(LuaScripts.decideTokenBucket(), List.of(key), List.of(text, "2"));
		List<Object> second = this.scripts.run(LuaScripts.decideTokenBucket(), List.of(key), List.of(text, "1", "", "1"));
		long after = serverMicros();
		assertThat(first).containsExactly(1L, 3L, 1_440_000_000L, 0L, 0L, "");
		assertThat(second.subList(0, 2)).containsExactly(1L, 2L);
		long stored = Long.parseLong(this.redis.opsForValue().get(key).split(" ")[1]);
		assertThat(stored).isBetween(before, after);
		// Full again without this call's token once the two before it are back: 24 minutes on.
		assertThat((Long) second.get(5)).isBetween(before + 1_440_000_000L - 1, after + 1_440_000_000L);
	}

	@Test
	void aPolicyThatIsNotFourWholeNumbersIsAnError() {
		for (String policy : List.of("5 1 1", "5 1 1 0 0", "5 1 1 -1", "5 1.5 1 0", "")) {
			assertThatThrownBy(() -> this.scripts.run(LuaScripts.decideTokenBucket(), List.of("rl:{bad}"),
					List.of(policy, "1", Long.toString(NOW))))
				.hasStackTraceContaining("is not four whole numbers");
		}
		assertThat(this.redis.hasKey("rl:{bad}")).isFalse();
	}

	/** The decision as every build before the one-bucket script sent it: {@code decide.lua}, eight arguments. */
	private List<Object> decide(String key, RateLimitPolicy policy, long cost, long now) {
		byte[][] args = new byte[8][];
		args[0] = PolicyArguments.digits(now);
		args[1] = PolicyArguments.utf8("1");
		this.arguments.of(policy).put(args, 2, cost);
		return this.scripts.run(LuaScripts.decide(), List.of(key), args);
	}

	private List<Object> decideOne(String key, RateLimitPolicy policy, long cost, long now, boolean receipt) {
		byte[] tokenBucket = this.arguments.of(policy).tokenBucket();
		assertThat(tokenBucket).isNotNull();
		List<String> args = new ArrayList<>();
		args.add(new String(tokenBucket, StandardCharsets.US_ASCII));
		args.add(Long.toString(cost));
		args.add(Long.toString(now));
		if (receipt) {
			args.add("1");
		}
		return this.scripts.run(LuaScripts.decideTokenBucket(), List.of(key), args);
	}

	private long serverMicros() {
		return this.redis.execute((RedisCallback<Long>) (connection) -> connection.serverCommands()
			.time(TimeUnit.MICROSECONDS));
	}

	private static RateLimitPolicy bucket(long capacity, String refill, long maxWaitMicros) {
		return RateLimitPolicy.builder("tb-" + capacity + "-" + maxWaitMicros)
			.algorithm(Algorithm.TOKEN_BUCKET)
			.capacity(capacity)
			.refill(refill)
			.maxWaitMicros(maxWaitMicros)
			.build();
	}

}
