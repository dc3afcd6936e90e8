package dev.ratelimit.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.ratelimit.budget.Amounts;
import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.BudgetLimit;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.BudgetStore;
import dev.ratelimit.budget.BudgetWindow;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.StoreParts;
import dev.ratelimit.core.TimeSource;

/**
 * Keeps budget state in Redis, so that every application instance sharing the
 * server shares the budgets. Each operation is one script call ({@code FCALL}
 * or {@code EVALSHA}, see {@link ScriptRunner}) of
 * {@code META-INF/scripts/budget.lua} (composed with {@code lib.lua}), a
 * line-by-line mirror of {@link dev.ratelimit.budget.BudgetState} that reads,
 * decides, writes and sets the TTLs atomically, so both stores decide alike.
 * <p>
 * A budget key {@code k} is stored in three Redis keys: the hash {@code k}
 * (reserved, spent and window per limit, lease amounts), the sorted set
 * {@code k:l} of live leases and the sorted set {@code k:d} of settled or
 * released ids. On Redis Cluster they must share a slot, so {@code k} must
 * carry a hash tag, as the keys {@link dev.ratelimit.core.LimitKeys} builds
 * do. All three vanish when the state can be forgotten: when every window with
 * spend has ended and every lease and marker has expired.
 * <p>
 * The script reads the Redis server's {@code TIME}, the one clock
 * all instances agree on. Calendar windows (days, weeks and months in the
 * budget's zone) are placed by Java, which knows time zones and daylight
 * saving: it passes the window around its own clock and the end of the one
 * after it, and the script picks the one containing the server's time. A server
 * clock slightly ahead of this one around midnight thus still finds the new
 * window; one behind it starts the new window those few seconds early, never
 * late, and never moves a window back. Failures of Redis are thrown as
 * Spring's {@link org.springframework.dao.DataAccessException}s, unchanged, for
 * the caller to apply the budget's failure mode.
 * <p>
 * A reservation can also be made without waiting ({@link #reserveAsync}): the
 * same script call through Lettuce's asynchronous API on the limiter's own
 * connection (see {@link ScriptRunner#runAsync}).
 */
public final class RedisBudgetStore implements BudgetStore {

	private static final LimiterScript<List<Object>> SCRIPT = LuaScripts.budget();

	/** Reply values before the limits: allowed, reserved, retry after. */
	private static final int HEADER_FIELDS = 3;

	/** Reply values per limit: spent, remaining, reset after, violated. */
	private static final int LIMIT_FIELDS = 4;

	private final StringRedisTemplate redis;

	private final ScriptRunner scripts;

	private final @Nullable TimeSource explicitClock;

	private final TimeSource spanClock;

	/**
	 * Creates a store that uses the Redis server's clock.
	 * @param connectionFactory the connection factory
	 */
	public RedisBudgetStore(RedisConnectionFactory connectionFactory) {
		this(connectionFactory, null);
	}

	/**
	 * Creates a store on the limiter's connection, which fails calls at once
	 * while Redis is silent (see {@link RedisSilence}).
	 * @param connection the limiter's connection
	 */
	public RedisBudgetStore(RedisLimiterConnection connection) {
		this(connection.connectionFactory(), new ScriptRunner(connection, LimitKind.BUDGET), null);
	}

	/**
	 * Creates a store, for tests replaying a timeline: package-private since
	 * instances' clocks never agree exactly, so production reads the server's.
	 * @param connectionFactory the connection factory
	 * @param explicitClock the clock whose time is passed to the script and
	 * places calendar windows, or {@code null} to use the Redis server's
	 * {@code TIME} (calendar windows are then placed by the system clock)
	 */
	RedisBudgetStore(RedisConnectionFactory connectionFactory, @Nullable TimeSource explicitClock) {
		this(connectionFactory, new ScriptRunner(connectionFactory), explicitClock);
	}

	private RedisBudgetStore(RedisConnectionFactory connectionFactory, ScriptRunner scripts,
			@Nullable TimeSource explicitClock) {
		// This constructor calls afterPropertiesSet(): the template is ready to use.
		this.redis = new StringRedisTemplate(connectionFactory);
		this.scripts = scripts;
		this.explicitClock = explicitClock;
		this.spanClock = (explicitClock != null) ? explicitClock : TimeSource.system();
	}

	@Override
	public StoreParts parts() {
		return this.scripts.parts();
	}

	@Override
	public BudgetDecision reserve(BudgetPolicy policy, String key, String id, long estimateMicros) {
		return run(policy, key, "reserve", id, estimateMicros);
	}

	@Override
	public CompletionStage<BudgetDecision> reserveAsync(BudgetPolicy policy, String key, String id,
			long estimateMicros, Executor blocking) {
		if (!this.scripts.runsAsync()) {
			return BudgetStore.super.reserveAsync(policy, key, id, estimateMicros, blocking);
		}
		int limits = policy.limits().size();
		return this.scripts.runAsync(SCRIPT, redisKeys(key), arguments(policy, "reserve", id, estimateMicros))
			.thenApply((reply) -> decision(reply, limits));
	}

	@Override
	public BudgetDecision extend(BudgetPolicy policy, String key, String id, long moreMicros) {
		return run(policy, key, "extend", id, moreMicros);
	}

	@Override
	public BudgetDecision settle(BudgetPolicy policy, String key, String id, long actualMicros) {
		return run(policy, key, "settle", id, actualMicros);
	}

	@Override
	public BudgetDecision release(BudgetPolicy policy, String key, String id) {
		return run(policy, key, "release", id, 0);
	}

	@Override
	public BudgetDecision peek(BudgetPolicy policy, String key) {
		// Writes nothing the caller needs kept (at most it forgets what expired): no wait for replicas.
		List<Object> reply = this.scripts.read(SCRIPT, redisKeys(key), arguments(policy, "peek", "", 0));
		return decision(reply, policy.limits().size());
	}

	@Override
	public void reset(BudgetPolicy policy, String key) {
		// One DEL of the three keys: they share a hash tag, so a cluster takes them in one command.
		this.redis.delete(redisKeys(key));
	}

	/**
	 * Returns the Redis keys of a budget key, as the script reads them: the
	 * state, the leases and the done markers.
	 * @param key the storage key
	 * @return the three keys
	 */
	static List<String> redisKeys(String key) {
		return List.of(key, key + ":l", key + ":d");
	}

	private BudgetDecision run(BudgetPolicy policy, String key, String operation, String id, long amountMicros) {
		List<Object> reply = this.scripts.run(SCRIPT, redisKeys(key), arguments(policy, operation, id, amountMicros));
		return decision(reply, policy.limits().size());
	}

	/** The script's arguments for an operation, whichever way it is sent. */
	private List<String> arguments(BudgetPolicy policy, String operation, String id, long amountMicros) {
		if (amountMicros < 0 || amountMicros > Amounts.MAX_MICROS) {
			// Lua's doubles hold sums of such amounts exactly; larger ones would be rounded.
			throw new IllegalArgumentException("Amount of budget '" + policy.name() + "' must be between 0 and "
					+ Amounts.format(Amounts.MAX_MICROS) + ", was " + amountMicros + " micro-units");
		}
		// One reading places the calendar windows and, with an explicit clock, is the script's now.
		long javaNow = this.spanClock.currentTimeMicros();
		List<BudgetLimit> limits = policy.limits();
		BudgetWindow.Span[] spans = BudgetStore.spans(policy, javaNow);
		List<String> args = new ArrayList<>(5 + 5 * limits.size());
		args.add(operation);
		args.add((this.explicitClock != null) ? Long.toString(javaNow) : "");
		args.add(id);
		args.add(Long.toString(amountMicros));
		args.add(Long.toString(policy.reservationTimeoutMicros()));
		for (int i = 0; i < limits.size(); i++) {
			BudgetLimit limit = limits.get(i);
			BudgetWindow.Span span = spans[i];
			args.add((span != null) ? "c" : "r");
			args.add(Long.toString(limit.amountMicros()));
			if (span != null) {
				args.add(Long.toString(span.startMicros()));
				args.add(Long.toString(span.endMicros()));
				args.add(Long.toString(span.nextEndMicros()));
			}
			else {
				args.add(Long.toString(limit.window().rollingMicros()));
				args.add("0");
				args.add("0");
			}
		}
		return args;
	}

	private static BudgetDecision decision(@Nullable List<Object> reply, int limits) {
		if (reply == null || reply.size() != HEADER_FIELDS + LIMIT_FIELDS * limits) {
			throw new IllegalStateException("Unexpected reply from the budget script: " + reply);
		}
		long[] spent = new long[limits];
		long[] remaining = new long[limits];
		long[] resetAfter = new long[limits];
		boolean[] violated = new boolean[limits];
		for (int i = 0; i < limits; i++) {
			int at = HEADER_FIELDS + i * LIMIT_FIELDS;
			spent[i] = number(reply, at);
			remaining[i] = number(reply, at + 1);
			resetAfter[i] = number(reply, at + 2);
			violated[i] = number(reply, at + 3) == 1L;
		}
		return new BudgetDecision(number(reply, 0) == 1L, spent, number(reply, 1), remaining, resetAfter, violated,
				number(reply, 2));
	}

	private static long number(List<Object> reply, int index) {
		if (!(reply.get(index) instanceof Long value)) {
			throw new IllegalStateException("Unexpected reply from the budget script: " + reply);
		}
		return value;
	}

}
