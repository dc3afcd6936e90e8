package dev.ratelimit.redis;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.ClassUtils;

import dev.ratelimit.core.Acquisition;
import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.AsyncCalls;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.StoreParts;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Take;
import dev.ratelimit.core.TimeSource;

/**
 * Keeps limiter state in Redis, so that every application instance sharing the
 * server shares the limits. Every algorithm runs inside one composed Lua script
 * ({@code META-INF/scripts/decide.lua} with {@code lib.lua} and one file per
 * algorithm, each a line-by-line mirror of its {@link dev.ratelimit.core.LimitState}),
 * which reads, decides, writes and sets the TTL atomically, so both backends
 * decide alike; one token bucket alone, the commonest decision, has a script of
 * its own, {@code decide_token_bucket.lua}, which decides with the same code and
 * costs the server less. A decision is one script call ({@code FCALL} on the limiter's
 * own connection, else {@code EVALSHA}; see {@link ScriptRunner}), however
 * many policies it layers, as long as their keys share a Redis Cluster slot; on a standalone
 * server or Sentinel they always do.
 * <p>
 * <strong>Layered decisions across cluster slots.</strong> A script may only
 * touch keys of one slot, so when the connection factory talks to a cluster
 * (or is of a type this class does not know), the policies are grouped by slot
 * and the groups decided one after another, each all or nothing in its own
 * script. When a later group denies, the earlier groups have already taken
 * their costs: they are given back at once with {@code refund.lua}, and those
 * policies are reported as allowed with nothing taken. Until the refund lands
 * (one round trip per group) a concurrent caller of the same keys can see the
 * quota taken and be denied where it would have been allowed; the limit itself
 * is never exceeded. Turns of the shaping leaky bucket are only given back
 * while no later caller has queued behind them, since that caller was already
 * told when to go. Keys that share a hash tag, as the keys of one caller do,
 * share a slot and never need this.
 * <p>
 * The script reads the Redis server's {@code TIME}, the one clock
 * all instances agree on (in a cluster, each key is always decided on its own
 * node's clock). Failures of Redis are thrown as Spring's
 * {@link org.springframework.dao.DataAccessException}s, unchanged, for the
 * caller to apply the policies' failure modes; a failure in the middle of a
 * layered decision across slots first gives back what earlier groups took, as
 * far as Redis still answers.
 * <p>
 * <strong>Without waiting.</strong> {@link #tryConsumeAllAsync} and
 * {@link #tryTakeAllAsync} send the same script call through Lettuce's
 * asynchronous API on the limiter's own connection (see
 * {@link ScriptRunner#runAsync}), so that a caller on an event loop never waits
 * for Redis. A layered decision across cluster slots, whose groups and refunds
 * follow one another, and a connection other than the limiter's own, still
 * decide synchronously, on the executor given.
 */
public final class RedisRateLimitBackend implements RateLimitBackend {

	private static final LimiterScript<List<Object>> REFUND = LuaScripts.refund();

	/** The slot groups of a single acquisition. */
	private static final List<List<Integer>> ONE_GROUP = List.of(List.of(0));

	/** Values per policy in the replies of both scripts. */
	private static final int REPLY_FIELDS = 6;

	private static final byte[] TAKE = PolicyArguments.utf8("1");

	private static final byte[] LOOK = PolicyArguments.utf8("0");

	/** The argument that has the script of one token bucket return a receipt. */
	private static final byte[] WITH_RECEIPT = PolicyArguments.utf8("1");

	/** The time argument that has the script read the server's TIME. */
	private static final byte[] SERVER_TIME = new byte[0];

	private final StringRedisTemplate redis;

	private final ScriptRunner scripts;

	private final @Nullable TimeSource explicitClock;

	private final PolicyArguments policyArguments = new PolicyArguments();

	private final boolean clusterAware;

	/**
	 * Creates a backend that uses the Redis server's clock.
	 * @param connectionFactory the connection factory
	 */
	public RedisRateLimitBackend(RedisConnectionFactory connectionFactory) {
		this(connectionFactory, null);
	}

	/**
	 * Creates a backend on the limiter's connection, which fails calls at once
	 * while Redis is silent (see {@link RedisSilence}).
	 * @param connection the limiter's connection
	 */
	public RedisRateLimitBackend(RedisLimiterConnection connection) {
		this(connection.connectionFactory(), new ScriptRunner(connection, LimitKind.RATE_LIMIT), null);
	}

	/**
	 * Creates a backend, for tests replaying a timeline: package-private since
	 * instances' clocks never agree exactly, so production reads the server's.
	 * @param connectionFactory the connection factory
	 * @param explicitClock the clock whose time is passed to the script, or
	 * {@code null} to use the Redis server's {@code TIME}
	 */
	RedisRateLimitBackend(RedisConnectionFactory connectionFactory, @Nullable TimeSource explicitClock) {
		this(connectionFactory, new ScriptRunner(connectionFactory), explicitClock);
	}

	private RedisRateLimitBackend(RedisConnectionFactory connectionFactory, ScriptRunner scripts,
			@Nullable TimeSource explicitClock) {
		// This constructor calls afterPropertiesSet(): the template is ready to use.
		this.redis = new StringRedisTemplate(connectionFactory);
		this.scripts = scripts;
		this.explicitClock = explicitClock;
		this.clusterAware = isClusterAware(connectionFactory);
	}

	@Override
	public StoreParts parts() {
		return this.scripts.parts();
	}

	@Override
	public List<Decision> tryConsumeAll(List<Acquisition> acquisitions) {
		return take(acquisitions, false).decisions();
	}

	@Override
	public CompletionStage<List<Decision>> tryConsumeAllAsync(List<Acquisition> acquisitions, Executor blocking) {
		return takeAsync(acquisitions, false, blocking).thenApply(Reply::decisions);
	}

	@Override
	public CompletionStage<List<Take>> tryTakeAllAsync(List<Acquisition> acquisitions, Executor blocking) {
		return takeAsync(acquisitions, true, blocking).thenApply((reply) -> takes(acquisitions, reply));
	}

	/**
	 * {@link #take} without waiting: one script call sent asynchronously, or,
	 * across cluster slots or off the limiter's own connection, the synchronous
	 * decision on {@code blocking}.
	 */
	private CompletionStage<Reply> takeAsync(List<Acquisition> acquisitions, boolean receipts, Executor blocking) {
		if (!this.scripts.runsAsync() || slotGroups(acquisitions).size() != 1) {
			return AsyncCalls.call(true, blocking, () -> take(acquisitions, receipts));
		}
		Call call = decideCall(acquisitions, now(), TAKE, receipts);
		return this.scripts.runAsync(call.script(), keys(acquisitions), call.args())
			.thenApply((reply) -> reply(acquisitions, reply));
	}

	/**
	 * Decides like {@link #tryConsumeAll}; the receipts are the scripts' own, the
	 * ones {@code refund.lua} reads: the window's index for the window counters,
	 * the log entry's member for the sliding log, a time for the buckets.
	 */
	@Override
	public List<Take> tryTakeAll(List<Acquisition> acquisitions) {
		return takes(acquisitions, take(acquisitions, true));
	}

	private static List<Take> takes(List<Acquisition> acquisitions, Reply reply) {
		List<Take> takes = new ArrayList<>(acquisitions.size());
		for (int i = 0; i < acquisitions.size(); i++) {
			Decision decision = reply.decisions().get(i);
			boolean took = decision.allowed() && acquisitions.get(i).cost() > 0;
			takes.add(new Take(decision, took ? reply.receipts().get(i) : null));
		}
		return takes;
	}

	/**
	 * Gives back with {@code refund.lua}, the script that already returns what a
	 * layered decision across cluster slots took when a later slot denies.
	 */
	@Override
	public void giveBack(RateLimitPolicy policy, String key, long cost, String receipt) {
		Acquisition acquisition = new Acquisition(policy, key, cost);
		byte[][] args = new byte[8][];
		args[0] = now();
		this.policyArguments.of(policy).put(args, 1, cost);
		args[7] = PolicyArguments.utf8(receipt);
		run(REFUND, List.of(acquisition), args);
	}

	/** The time the scripts decide at: the explicit clock's, else the server's own. */
	private byte[] now() {
		return (this.explicitClock != null) ? PolicyArguments.digits(this.explicitClock.currentTimeMicros())
				: SERVER_TIME;
	}

	/**
	 * Decides and takes; {@code receipts} when the caller may give back what was
	 * taken. Across slots there are always receipts: the refunds of a later
	 * denial need them.
	 */
	private Reply take(List<Acquisition> acquisitions, boolean receipts) {
		byte[] now = now();
		List<List<Integer>> groups = slotGroups(acquisitions);
		if (groups.size() == 1) {
			return decide(acquisitions, now, TAKE, receipts);
		}
		return decideSlotBySlot(acquisitions, groups, now);
	}

	@Override
	public void reset(RateLimitPolicy policy, String key) {
		// Every algorithm keeps a key's state in that one Redis key; an absent key is a full quota.
		this.redis.delete(key);
	}

	private Reply decideSlotBySlot(List<Acquisition> acquisitions, List<List<Integer>> groups, byte[] now) {
		Decision[] decisions = new Decision[acquisitions.size()];
		String[] receipts = new String[acquisitions.size()];
		List<Taken> taken = new ArrayList<>();
		try {
			for (int g = 0; g < groups.size(); g++) {
				List<Integer> group = groups.get(g);
				List<Acquisition> members = select(acquisitions, group);
				Reply reply = decide(members, now, TAKE, true);
				reply.copyInto(decisions, group);
				if (!reply.allAllowed()) {
					refund(taken, now, decisions);
					for (List<Integer> later : groups.subList(g + 1, groups.size())) {
						// Reported as the in-memory backend would: denials, or the state with nothing taken.
						decide(select(acquisitions, later), now, LOOK, false).copyInto(decisions, later);
					}
					// Nothing stays taken, so there is nothing to give back: no receipts.
					return new Reply(List.of(decisions), Arrays.asList(new String[acquisitions.size()]));
				}
				taken.add(new Taken(group, members, reply.receipts()));
				for (int i = 0; i < group.size(); i++) {
					receipts[group.get(i)] = reply.receipts().get(i);
				}
			}
			return new Reply(List.of(decisions), Arrays.asList(receipts));
		}
		catch (RuntimeException ex) {
			try {
				refund(taken, now, decisions);
			}
			catch (RuntimeException refundFailure) {
				ex.addSuppressed(refundFailure);
			}
			throw ex;
		}
	}

	/**
	 * Refunds the groups in {@code taken}, removing each before its attempt: a
	 * refund whose reply was lost may have landed, and giving back twice would
	 * admit more than the limit.
	 */
	private void refund(List<Taken> taken, byte[] now, Decision[] decisions) {
		while (!taken.isEmpty()) {
			Taken group = taken.remove(0);
			byte[][] args = new byte[1 + 7 * group.members().size()][];
			args[0] = now;
			int at = 1;
			for (int i = 0; i < group.members().size(); i++) {
				at = put(args, at, group.members().get(i));
				args[at++] = PolicyArguments.utf8(group.receipts().get(i));
			}
			run(REFUND, group.members(), args).copyInto(decisions, group.indices());
		}
	}

	/**
	 * Decides with one script call. {@code receipts} is a hint: only the script
	 * of one token bucket leaves them out when not asked (the others'
	 * receipts cost little, and what nothing took has none anyway).
	 */
	private Reply decide(List<Acquisition> acquisitions, byte[] now, byte[] mode, boolean receipts) {
		Call call = decideCall(acquisitions, now, mode, receipts);
		if (mode == LOOK) {
			// Takes nothing: no write to wait for.
			return reply(acquisitions, this.scripts.read(call.script(), keys(acquisitions), call.args()));
		}
		return run(call.script(), acquisitions, call.args());
	}

	/** The script call that decides, whichever way it is sent. */
	private Call decideCall(List<Acquisition> acquisitions, byte[] now, byte[] mode, boolean receipts) {
		if (acquisitions.size() == 1 && mode == TAKE) {
			byte[] tokenBucket = this.policyArguments.of(acquisitions.get(0).policy()).tokenBucket();
			if (tokenBucket != null) {
				return tokenBucketCall(acquisitions, tokenBucket, now, receipts);
			}
		}
		byte[][] args = new byte[2 + 6 * acquisitions.size()][];
		args[0] = now;
		args[1] = mode;
		int at = 2;
		for (Acquisition acquisition : acquisitions) {
			at = put(args, at, acquisition);
		}
		return new Call(decideScript(acquisitions), args);
	}

	/**
	 * One token bucket alone, the commonest decision, with the script made for it:
	 * the policy as one argument, the cost, the time only when it is not the
	 * server's, and the flag that asks for the receipt only when it is wanted
	 * (see {@code decide_token_bucket.lua}): every argument costs the server.
	 */
	private static Call tokenBucketCall(List<Acquisition> acquisitions, byte[] tokenBucket, byte[] now,
			boolean receipts) {
		byte[] cost = PolicyArguments.digits(acquisitions.get(0).cost());
		byte[][] args;
		if (receipts) {
			args = new byte[][] { tokenBucket, cost, now, WITH_RECEIPT };
		}
		else {
			args = (now == SERVER_TIME) ? new byte[][] { tokenBucket, cost } : new byte[][] { tokenBucket, cost, now };
		}
		return new Call(LuaScripts.decideTokenBucket(), args);
	}

	/** Puts algorithm, capacity, a, b, cost and max wait at {@code at}, as {@code decide.lua} reads them. */
	private int put(byte[][] args, int at, Acquisition acquisition) {
		return this.policyArguments.of(acquisition.policy()).put(args, at, acquisition.cost());
	}

	private Reply run(LimiterScript<List<Object>> script, List<Acquisition> acquisitions, byte[][] args) {
		return reply(acquisitions, this.scripts.run(script, keys(acquisitions), args));
	}

	private static List<String> keys(List<Acquisition> acquisitions) {
		if (acquisitions.size() == 1) {
			return List.of(acquisitions.get(0).key());
		}
		List<String> keys = new ArrayList<>(acquisitions.size());
		for (Acquisition acquisition : acquisitions) {
			keys.add(acquisition.key());
		}
		return keys;
	}

	/** Reads the decisions and receipts of a script's reply, whichever way it was sent. */
	private static Reply reply(List<Acquisition> acquisitions, @Nullable List<Object> reply) {
		if (reply == null || reply.size() != REPLY_FIELDS * acquisitions.size()) {
			throw new IllegalStateException("Unexpected reply from the rate limit script: " + reply);
		}
		List<Decision> decisions = new ArrayList<>(acquisitions.size());
		List<String> receipts = new ArrayList<>(acquisitions.size());
		for (int i = 0; i < acquisitions.size(); i++) {
			int at = i * REPLY_FIELDS;
			decisions.add(new Decision(number(reply, at) == 1L, number(reply, at + 1),
					acquisitions.get(i).policy().capacity(), number(reply, at + 2), number(reply, at + 3),
					number(reply, at + 4)));
			receipts.add(String.valueOf(reply.get(at + 5)));
		}
		return new Reply(decisions, receipts);
	}

	private static LimiterScript<List<Object>> decideScript(List<Acquisition> acquisitions) {
		Algorithm algorithm = acquisitions.get(0).policy().algorithm();
		for (int i = 1; i < acquisitions.size(); i++) {
			if (acquisitions.get(i).policy().algorithm() != algorithm) {
				return LuaScripts.decide();
			}
		}
		return LuaScripts.decide(algorithm);
	}

	private static long number(List<Object> reply, int index) {
		if (!(reply.get(index) instanceof Long value)) {
			throw new IllegalStateException("Unexpected reply from the rate limit script: " + reply);
		}
		return value;
	}

	/**
	 * Groups the acquisitions by cluster slot, keeping their order; one group when
	 * the server is not a cluster or every key shares a slot.
	 */
	private List<List<Integer>> slotGroups(List<Acquisition> acquisitions) {
		if (acquisitions.size() == 1) {
			// By far the common call: nothing to group, nothing to allocate.
			return ONE_GROUP;
		}
		Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
		for (int i = 0; i < acquisitions.size(); i++) {
			int slot = this.clusterAware ? ClusterSlotHashUtil.calculateSlot(acquisitions.get(i).key()) : 0;
			bySlot.computeIfAbsent(slot, (s) -> new ArrayList<>()).add(i);
		}
		return new ArrayList<>(bySlot.values());
	}

	private static List<Acquisition> select(List<Acquisition> acquisitions, List<Integer> indices) {
		List<Acquisition> selected = new ArrayList<>(indices.size());
		for (int index : indices) {
			selected.add(acquisitions.get(index));
		}
		return selected;
	}

	/**
	 * Returns whether keys of one script call must share a slot: true for a
	 * cluster, and for factories this class cannot ask, which may be one.
	 */
	private static boolean isClusterAware(RedisConnectionFactory connectionFactory) {
		ClassLoader classLoader = RedisRateLimitBackend.class.getClassLoader();
		// Each check only runs with its client present: the factory classes need it to load.
		if (ClassUtils.isPresent("io.lettuce.core.RedisClient", classLoader)
				&& Lettuce.isFactory(connectionFactory)) {
			return Lettuce.isClusterAware(connectionFactory);
		}
		if (ClassUtils.isPresent("redis.clients.jedis.Jedis", classLoader) && Jedis.isFactory(connectionFactory)) {
			return Jedis.isClusterAware(connectionFactory);
		}
		return true;
	}

	/** The decisions of one script call, and the receipts of what it took. */
	private record Reply(List<Decision> decisions, List<String> receipts) {

		boolean allAllowed() {
			return this.decisions.stream().allMatch(Decision::allowed);
		}

		void copyInto(Decision[] target, List<Integer> indices) {
			for (int i = 0; i < indices.size(); i++) {
				target[indices.get(i)] = this.decisions.get(i);
			}
		}

	}

	/** A script and its arguments. */
	private record Call(LimiterScript<List<Object>> script, byte[][] args) {
	}

	/** A slot group whose costs were taken, with what {@code refund.lua} needs to give them back. */
	private record Taken(List<Integer> indices, List<Acquisition> members, List<String> receipts) {
	}

	private static final class Lettuce {

		static boolean isFactory(RedisConnectionFactory factory) {
			return factory instanceof LettuceConnectionFactory;
		}

		static boolean isClusterAware(RedisConnectionFactory factory) {
			return ((LettuceConnectionFactory) factory).isClusterAware();
		}

	}

	private static final class Jedis {

		static boolean isFactory(RedisConnectionFactory factory) {
			return factory instanceof JedisConnectionFactory;
		}

		static boolean isClusterAware(RedisConnectionFactory factory) {
			return ((JedisConnectionFactory) factory).isRedisClusterAware();
		}

	}

}
