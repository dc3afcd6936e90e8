package dev.ratelimit.redis;

import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;

import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.concurrency.PermitStore;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.StoreParts;
import dev.ratelimit.core.TimeSource;

/**
 * Keeps the permits of distributed concurrency caps in Redis, so that every
 * application instance sharing the server shares the caps. A storage key is
 * one sorted set of permit ids scored by the expiry of their leases; each
 * operation is one script call ({@code FCALL} or {@code EVALSHA}, see
 * {@link ScriptRunner}) of {@code META-INF/scripts/semaphore.lua}
 * (composed with {@code lib.lua}), which drops expired leases, decides, writes
 * and sets the key's TTL to its latest lease atomically. The key is one Redis
 * key, so it works on Redis Cluster as it is.
 * <p>
 * The script reads the Redis server's {@code TIME}, the one clock
 * all instances agree on: a lease expires by the server's clock, whatever the
 * clocks of its holders say. Failures of Redis are thrown as Spring's
 * {@link org.springframework.dao.DataAccessException}s, unchanged, for the
 * limiter to apply the policy's failure mode.
 * <p>
 * A permit can also be taken without waiting ({@link #tryAcquireAsync}): the
 * same script call through Lettuce's asynchronous API on the limiter's own
 * connection (see {@link ScriptRunner#runAsync}).
 */
public final class RedisPermitStore implements PermitStore {

	private static final LimiterScript<List<Object>> SCRIPT = LuaScripts.semaphore();

	/** Reply values: flag, holders, wait. */
	private static final int REPLY_FIELDS = 3;

	private final ScriptRunner scripts;

	private final @Nullable TimeSource explicitClock;

	/**
	 * Creates a store that uses the Redis server's clock.
	 * @param connectionFactory the connection factory
	 */
	public RedisPermitStore(RedisConnectionFactory connectionFactory) {
		this(connectionFactory, null);
	}

	/**
	 * Creates a store on the limiter's connection, which fails calls at once
	 * while Redis is silent (see {@link RedisSilence}).
	 * @param connection the limiter's connection
	 */
	public RedisPermitStore(RedisLimiterConnection connection) {
		this(new ScriptRunner(connection, LimitKind.CONCURRENCY), null);
	}

	/**
	 * Creates a store, for tests replaying a timeline: package-private since
	 * instances' clocks never agree exactly, so production reads the server's.
	 * @param connectionFactory the connection factory
	 * @param explicitClock the clock whose time is passed to the script, or
	 * {@code null} to use the Redis server's {@code TIME}
	 */
	RedisPermitStore(RedisConnectionFactory connectionFactory, @Nullable TimeSource explicitClock) {
		this(new ScriptRunner(connectionFactory), explicitClock);
	}

	private RedisPermitStore(ScriptRunner scripts, @Nullable TimeSource explicitClock) {
		this.scripts = scripts;
		this.explicitClock = explicitClock;
	}

	@Override
	public StoreParts parts() {
		return this.scripts.parts();
	}

	@Override
	public Attempt tryAcquire(ConcurrencyPolicy policy, String key, String id) {
		return attempt(run(key, "acquire", id, policy.permits(), policy.permitTtlMicros()));
	}

	@Override
	public CompletionStage<Attempt> tryAcquireAsync(ConcurrencyPolicy policy, String key, String id,
			Executor blocking) {
		if (!this.scripts.runsAsync()) {
			return PermitStore.super.tryAcquireAsync(policy, key, id, blocking);
		}
		return this.scripts
			.runAsync(SCRIPT, List.of(key), arguments("acquire", id, policy.permits(), policy.permitTtlMicros()))
			.thenApply((reply) -> attempt(checked(reply)));
	}

	private static Attempt attempt(List<Object> reply) {
		return new Attempt(number(reply, 0) == 1L, (int) number(reply, 1), number(reply, 2));
	}

	@Override
	public boolean renew(ConcurrencyPolicy policy, String key, String id) {
		return number(run(key, "renew", id, 0, policy.permitTtlMicros()), 0) == 1L;
	}

	@Override
	public void release(ConcurrencyPolicy policy, String key, String id) {
		run(key, "release", id, 0, 0);
	}

	@Override
	public int holders(ConcurrencyPolicy policy, String key) {
		return (int) number(checked(this.scripts.read(SCRIPT, List.of(key), arguments("holders", "", 0, 0))), 1);
	}

	private List<Object> run(String key, String operation, String id, int permits, long leaseMicros) {
		return checked(this.scripts.run(SCRIPT, List.of(key), arguments(operation, id, permits, leaseMicros)));
	}

	private List<String> arguments(String operation, String id, int permits, long leaseMicros) {
		String now = (this.explicitClock != null) ? Long.toString(this.explicitClock.currentTimeMicros()) : "";
		return List.of(operation, now, id, Integer.toString(permits), Long.toString(leaseMicros));
	}

	private static List<Object> checked(@Nullable List<Object> reply) {
		if (reply == null || reply.size() != REPLY_FIELDS) {
			throw new IllegalStateException("Unexpected reply from the semaphore script: " + reply);
		}
		return reply;
	}

	private static long number(List<Object> reply, int index) {
		if (!(reply.get(index) instanceof Long value)) {
			throw new IllegalStateException("Unexpected reply from the semaphore script: " + reply);
		}
		return value;
	}

}
