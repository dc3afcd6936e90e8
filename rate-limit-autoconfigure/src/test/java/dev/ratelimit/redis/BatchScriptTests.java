package dev.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import java.util.concurrent.TimeUnit;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.core.NestedExceptionUtils;
import org.springframework.data.redis.connection.RedisConnection;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.within;

/**
 * {@code batch.lua} applies decision calls of every kind as one call each
 * would: a random timeline of rate-limit decisions (every algorithm, alone and
 * layered, and the one-bucket script), give-backs, budget reservations and
 * settles, and concurrency permits acquired and released, at explicit times,
 * is sent one call at a time on one set of keys and in batches of random size
 * on another. Every reply and every stored state must be the same, whichever
 * way the batches fall; both forms of the script, the library's function and
 * the {@code EVALSHA} text, are run.
 */
class BatchScriptTests extends SharedRedisTests {

	private static final long NOW = 1_767_225_600_000_000L;

	private static final long SECOND = 1_000_000L;

	private static final List<RateLimitPolicy> POLICIES = List.of(
			policy(Algorithm.TOKEN_BUCKET, 5, "5/1s", null), policy(Algorithm.LEAKY_BUCKET, 4, "2/1s", null),
			policy(Algorithm.LEAKY_BUCKET_SHAPING, 3, "3/1s", null), policy(Algorithm.FIXED_WINDOW, 6, null, "1s"),
			policy(Algorithm.SLIDING_WINDOW_LOG, 4, null, "1s"), policy(Algorithm.SLIDING_WINDOW_COUNTER, 5, null, "2s"));

	private final PolicyArguments arguments = new PolicyArguments();

	private ScriptRunner scripts;

	@BeforeEach
	void scripts() {
		this.scripts = new ScriptRunner(connectionFactory);
		try (RedisConnection connection = connectionFactory.getConnection()) {
			connection.serverCommands().flushAll();
		}
	}

	@Test
	void aBatchDecidesAsEachOfItsCallsWouldAlone() {
		Random random = new Random(20261207L);
		long now = NOW;
		int reservations = 0;
		List<Call> pending = new ArrayList<>();
		List<Object> alone = new ArrayList<>();
		int batches = 0;
		for (int step = 0; step < 1_500; step++) {
			now += (random.nextInt(3) == 0) ? 0 : random.nextLong(SECOND / 4);
			Call call = switch (random.nextInt(6)) {
				case 0, 1 -> {
					RateLimitPolicy policy = POLICIES.get(random.nextInt(POLICIES.size()));
					yield decide(List.of(policy), random.nextInt(3), now);
				}
				case 2 -> decide(List.of(POLICIES.get(0), POLICIES.get(3)), 1, now);
				case 3 -> tokenBucket(random.nextInt(3), now);
				case 4 -> (random.nextBoolean() || reservations == 0)
						? budget("reserve", "r" + ++reservations, 1 + random.nextInt(400), now)
						: budget("settle", "r" + (1 + random.nextInt(reservations)), random.nextInt(300), now);
				default -> semaphore(random.nextBoolean() ? "acquire" : "release", "p" + random.nextInt(5), now);
			};
			// One at a time first: a give-back reads the receipts its decision replied.
			Object reply = this.scripts.run(script(call), call.keys("one"), call.args());
			alone.add(reply);
			pending.add(call);
			// A layered decision that took its costs is given back now and then, as after a refusal elsewhere.
			if (call.driver().equals("decide") && call.keyCount() == 2 && ((List<?>) reply).get(0).equals(1L)
					&& random.nextBoolean()) {
				Call refund = refund(call, (List<?>) reply, now);
				alone.add(this.scripts.run(LuaScripts.refund(), refund.keys("one"), refund.args()));
				pending.add(refund);
			}
			if (random.nextInt(8) == 0 || step == 1_499) {
				List<Object> batched = batch(pending, "batch", (batches++ % 2 == 0));
				assertThat(batched).as("batch %d", batches).isEqualTo(alone);
				pending.clear();
				alone.clear();
			}
		}
		for (String key : List.of("tb", "lb", "ls", "fw", "sl", "sc", "budget", "budget:leases", "budget:done",
				"p")) {
			assertThat(dump("batch", key)).as(key).isEqualTo(dump("one", key));
			// Written at the end of its batch with the TTL its last write set: the same within the run's time.
			assertThat(pttl("batch", key)).as("TTL of %s", key).isCloseTo(pttl("one", key), within(5_000L));
		}
	}

	@Test
	void severalDecisionsOnOneKeyReadItOnceAndWriteItOnce() {
		List<Call> calls = new ArrayList<>();
		List<Object> alone = new ArrayList<>();
		for (int i = 0; i < 12; i++) {
			long now = NOW + i * (SECOND / 10);
			for (Call call : List.of(tokenBucket(1, now), decide(List.of(POLICIES.get(3)), 1, now),
					decide(List.of(POLICIES.get(5)), 1, now))) {
				calls.add(call);
				alone.add(this.scripts.run(script(call), call.keys("one"), call.args()));
			}
		}
		CommandStats.reset(connectionFactory);
		assertThat(batch(calls, "batch", true)).isEqualTo(alone);
		// Three keys, 36 decisions: one GET and one SET each key, where one at a time took 36 of each.
		assertThat(CommandStats.calls(connectionFactory, "get")).isEqualTo(3);
		assertThat(CommandStats.calls(connectionFactory, "set")).isEqualTo(3);
		for (String key : List.of("tb", "fw", "sc")) {
			assertThat(dump("batch", key)).as(key).isEqualTo(dump("one", key));
		}
	}

	@Test
	void aBucketAnEarlierVersionKeptAsAHashIsReadOnceAndReplacedOnce() {
		// Empty just now, as a version before the string wrote it: two of five tokens back 400 ms later.
		for (String prefix : List.of("one", "batch")) {
			server.call("HSET", "{" + prefix + "}:tb", "t", "0", "ts", Long.toString(NOW));
		}
		long later = NOW + 2 * SECOND / 5;
		List<Call> calls = List.of(tokenBucket(1, later), tokenBucket(1, later), tokenBucket(1, later),
				tokenBucket(0, later + SECOND / 10));
		List<Object> alone = new ArrayList<>();
		for (Call call : calls) {
			alone.add(this.scripts.run(script(call), call.keys("one"), call.args()));
		}
		CommandStats.reset(connectionFactory);
		assertThat(batch(calls, "batch", true)).isEqualTo(alone);
		assertThat(CommandStats.calls(connectionFactory, "hmget")).isEqualTo(1);
		assertThat(CommandStats.calls(connectionFactory, "set")).isEqualTo(1);
		assertThat(dump("batch", "tb")).isEqualTo(dump("one", "tb"));
	}

	@Test
	void aKeyDeletedAndWrittenAgainInOneBatchEndsAsItsLastWriteLeftIt() {
		// A bucket filled back up is deleted; one taken from again is written: the last of them counts.
		List<Call> calls = List.of(tokenBucket(2, NOW), tokenBucket(0, NOW + 10 * SECOND), tokenBucket(1, NOW
				+ 10 * SECOND), tokenBucket(0, NOW + 20 * SECOND));
		List<Object> alone = new ArrayList<>();
		for (Call call : calls) {
			alone.add(this.scripts.run(script(call), call.keys("one"), call.args()));
		}
		assertThat(batch(calls, "batch", true)).isEqualTo(alone);
		assertThat(dump("batch", "tb")).isEqualTo(dump("one", "tb"));
		List<Call> taking = List.of(tokenBucket(2, NOW + 30 * SECOND), tokenBucket(0, NOW + 40 * SECOND),
				tokenBucket(3, NOW + 40 * SECOND));
		alone.clear();
		for (Call call : taking) {
			alone.add(this.scripts.run(script(call), call.keys("one"), call.args()));
		}
		assertThat(batch(taking, "batch", false)).isEqualTo(alone);
		assertThat(dump("batch", "tb")).isNotNull().isEqualTo(dump("one", "tb"));
	}

	@Test
	void aCallThatFailsIsItsOwnAndTheCallsAfterItAreApplied() {
		Call first = semaphore("acquire", "p1", NOW);
		Call failing = new Call("budget", List.of("budget", "budget:leases", "budget:done"),
				List.of("spend", Long.toString(NOW), "x", "1", "1000000", "r", "1000000000", "60000000", "0", "0"));
		Call after = semaphore("acquire", "p2", NOW);
		List<Object> replies = batch(List.of(first, failing, after), "b", true);
		assertThat(replies).hasSize(3);
		assertThat(replies.get(0)).isEqualTo(List.of(1L, 1L, 0L));
		assertThat(String.valueOf(replies.get(1))).contains("unknown budget operation: spend");
		assertThat(replies.get(2)).isEqualTo(List.of(1L, 2L, 0L));
	}

	@Test
	void aFailedCallInABatchFailsAsItsOwnCallWould() {
		Call failing = new Call("budget", List.of("budget", "budget:leases", "budget:done"),
				List.of("spend", Long.toString(NOW), "x", "1", "1000000", "r", "1000000000", "60000000", "0", "0"));
		Throwable alone = catchThrowable(() -> this.scripts.run(LuaScripts.budget(), failing.keys("one"),
				failing.args()));
		DecisionBatch batch = DecisionBatch.of(List.of(new DecisionBatch.Call(LuaScripts.budget(),
				failing.keys("b"), failing.args().stream().map(PolicyArguments::utf8).toArray(byte[][]::new))));
		Object batched = batch.outcomes(this.scripts.run(LuaScripts.batch(), batch.keys(), batch.args())).get(0);
		assertThat(batched).isInstanceOf(alone.getClass());
		assertThat(why((Throwable) batched)).contains("unknown budget operation: spend");
		assertThat(why(alone)).contains("unknown budget operation: spend");
	}

	@Test
	void onlyDecisionsGoInABatchAndItsReplyHoldsOneEntryPerCall() {
		assertThatIllegalArgumentException().isThrownBy(() -> DecisionBatch
			.of(List.of(new DecisionBatch.Call(LuaScripts.pause(), List.of("p"), new byte[0][]))))
			.withMessageContaining("A batch cannot carry the limiter call");
		DecisionBatch two = DecisionBatch.of(List.of(
				new DecisionBatch.Call(LuaScripts.semaphore(), List.of("p"), new byte[0][]),
				new DecisionBatch.Call(LuaScripts.semaphore(), List.of("q"), new byte[0][])));
		assertThatIllegalStateException().isThrownBy(() -> two.outcomes(List.of(List.of(1L, List.of()))))
			.withMessage("A batch of 2 limiter call(s) was answered with 1 reply(ies)");
	}

	@Test
	void aMalformedBatchWritesNothing() {
		Call acquire = semaphore("acquire", "p1", NOW);
		List<String> args = new ArrayList<>(List.of("semaphore", "1", "5"));
		args.addAll(acquire.args());
		args.addAll(List.of("decide", "1", "99", "more"));
		assertThatThrownBy(() -> this.scripts.run(LuaScripts.batch(), List.of("m:p", "m:q"), args))
			.hasStackTraceContaining("a batch of limiter calls is malformed at argument 9");
		assertThat(dump("m", "p")).isNull();
	}

	/**
	 * Sends the calls as one batch on keys under {@code prefix}, and returns
	 * each call's outcome as it alone would have had it: the reply, or the
	 * failure's message.
	 */
	private List<Object> batch(List<Call> calls, String prefix, boolean asFunction) {
		DecisionBatch batch = DecisionBatch.of(calls.stream()
			.map((call) -> new DecisionBatch.Call(script(call), call.keys(prefix),
					call.args().stream().map(PolicyArguments::utf8).toArray(byte[][]::new)))
			.toList());
		Object reply = asFunction ? fcall(batch.keys(), batch.args())
				: this.scripts.run(LuaScripts.batch(), batch.keys(), batch.args());
		List<Object> each = new ArrayList<>();
		for (Object outcome : batch.outcomes(reply)) {
			each.add((outcome instanceof RuntimeException failure) ? "failed: " + why(failure) : outcome);
		}
		return each;
	}

	/** What Redis answered a failed call, under the exceptions that carry it. */
	private static String why(Throwable failure) {
		return String.valueOf(NestedExceptionUtils.getMostSpecificCause(failure).getMessage());
	}

	/** The batch as the library's function, its reply read as the runner reads one: numbers and texts. */
	@SuppressWarnings("unchecked")
	private List<?> fcall(List<String> keys, byte[][] args) {
		try (RedisConnection connection = connectionFactory.getConnection()) {
			RedisClusterAsyncCommands<byte[], byte[]> commands =
					(RedisClusterAsyncCommands<byte[], byte[]>) connection.getNativeConnection();
			commands.functionLoad(LuaScripts.library(), true).get(10, TimeUnit.SECONDS);
			Object reply = commands
				.fcall(LuaScripts.batch().function(), ScriptOutputType.MULTI,
						keys.stream().map(PolicyArguments::utf8).toArray(byte[][]::new),
						args)
				.get(10, TimeUnit.SECONDS);
			return (List<?>) texts(reply);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static Object texts(Object reply) {
		if (reply instanceof byte[] bytes) {
			return new String(bytes, StandardCharsets.UTF_8);
		}
		if (reply instanceof List<?> list) {
			return list.stream().map(BatchScriptTests::texts).toList();
		}
		return reply;
	}

	private Call decide(List<RateLimitPolicy> policies, long cost, long now) {
		byte[][] args = new byte[2 + 6 * policies.size()][];
		args[0] = PolicyArguments.digits(now);
		args[1] = PolicyArguments.utf8("1");
		List<String> keys = new ArrayList<>();
		int at = 2;
		for (RateLimitPolicy policy : policies) {
			at = this.arguments.of(policy).put(args, at, Math.min(cost, policy.capacity()));
			keys.add(code(policy));
		}
		return new Call("decide", keys, text(args));
	}

	private Call tokenBucket(long cost, long now) {
		byte[] policy = this.arguments.of(POLICIES.get(0)).tokenBucket();
		assertThat(policy).isNotNull();
		return new Call("decide_token_bucket", List.of("tb"),
				List.of(new String(policy, StandardCharsets.US_ASCII), Long.toString(cost), Long.toString(now), "1"));
	}

	/** Gives back what a layered decision took, with its receipts. */
	private Call refund(Call decided, List<?> reply, long now) {
		List<String> args = new ArrayList<>(List.of(Long.toString(now)));
		for (int i = 0; i < decided.keyCount(); i++) {
			// The policy's six as decided, then its receipt.
			args.addAll(decided.args().subList(2 + 6 * i, 2 + 6 * (i + 1)));
			args.add(String.valueOf(reply.get(6 * i + 5)));
		}
		return new Call("refund", decided.keys(), args);
	}

	private static Call budget(String operation, String id, long amountCents, long now) {
		// One rolling window of $50 a minute, leases of 30 s, amounts in micro-units.
		return new Call("budget", List.of("budget", "budget:leases", "budget:done"), List.of(operation,
				Long.toString(now), id, Long.toString(amountCents * 10_000L), "30000000", "r", "50000000", "60000000",
				"0", "0"));
	}

	private static Call semaphore(String operation, String id, long now) {
		return new Call("semaphore", List.of("p"), List.of(operation, Long.toString(now), id,
				operation.equals("acquire") ? "3" : "0", operation.equals("acquire") ? "2000000" : "0"));
	}

	private LimiterScript<?> script(Call call) {
		return switch (call.driver()) {
			case "decide" -> LuaScripts.decide();
			case "decide_token_bucket" -> LuaScripts.decideTokenBucket();
			case "refund" -> LuaScripts.refund();
			case "budget" -> LuaScripts.budget();
			default -> LuaScripts.semaphore();
		};
	}

	private byte[] dump(String prefix, String key) {
		try (RedisConnection connection = connectionFactory.getConnection()) {
			return connection.keyCommands().dump(("{" + prefix + "}:" + key).getBytes(StandardCharsets.UTF_8));
		}
	}

	private long pttl(String prefix, String key) {
		try (RedisConnection connection = connectionFactory.getConnection()) {
			Long ttl = connection.keyCommands().pTtl(("{" + prefix + "}:" + key).getBytes(StandardCharsets.UTF_8));
			return (ttl != null) ? ttl : -3;
		}
	}

	/** The policy's key: its algorithm's code, as the scripts read it. */
	private static String code(RateLimitPolicy policy) {
		return new String(PolicyArguments.Encoded.of(policy).code(), StandardCharsets.US_ASCII);
	}

	private static List<String> text(byte[][] args) {
		List<String> text = new ArrayList<>();
		for (byte[] arg : args) {
			text.add(new String(arg, StandardCharsets.UTF_8));
		}
		return text;
	}

	private static RateLimitPolicy policy(Algorithm algorithm, long capacity, String refill, String window) {
		RateLimitPolicy.Builder builder = RateLimitPolicy.builder("batch-" + algorithm).algorithm(algorithm)
			.capacity(capacity);
		return (refill != null) ? builder.refill(refill).build() : builder.window(window).build();
	}

	/** One call of a driver: its keys, named without their prefix, and its arguments. */
	private record Call(String driver, List<String> keys, List<String> args) {

		int keyCount() {
			return this.keys.size();
		}

		List<String> keys(String prefix) {
			return this.keys.stream().map((key) -> "{" + prefix + "}:" + key).toList();
		}

	}

}
