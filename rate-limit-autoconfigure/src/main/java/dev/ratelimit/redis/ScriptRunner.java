package dev.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.serializer.RedisSerializer;
import org.springframework.util.ClassUtils;

import dev.ratelimit.core.AsyncCalls;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.StoreParts;

/**
 * Runs the limiter's scripts, the one way every Redis backend and store calls
 * Redis for a decision. On the limiter's own connection (see
 * {@link RedisLimiterConnection}), once its connector has loaded the function
 * library, a script is one {@code FCALL}: the server runs only the script's
 * driver, not the whole composed text, which is what an {@code EVALSHA}
 * costs on every call. Otherwise, and whenever the server has lost the
 * library, it is one {@code EVALSHA} (Spring Data Redis sends the text as
 * {@code EVAL} once when the script cache lost it too).
 * <p>
 * A lost library (a restart without persistence, {@code FUNCTION FLUSH}, a
 * new cluster node) fails the {@code FCALL} before anything runs, so that
 * call is sent again as {@code EVALSHA}, and the connector loads the library
 * again in the background: no request thread waits for a load, and no call
 * is decided twice.
 * <p>
 * Every call passes the limiter connection's {@link RedisSilence} first: while
 * Redis is silent a call fails at once, unsent. With a client other than the
 * limiter's own Lettuce connection, whose replies no {@link SilenceWatch}
 * reads, a call that times out or cannot reach Redis is what tells that Redis
 * went silent.
 * <p>
 * On the limiter's own Lettuce connection a script can also be run without
 * waiting for its reply ({@link #runAsync}), for callers that must never block:
 * the same {@code FCALL}, the same {@code EVALSHA} (and {@code EVAL} when the
 * script cache lost it) through Lettuce's asynchronous API, behind the same
 * gate and within the same busy timeout.
 * <p>
 * On the limiter's own Lettuce connection, decisions of every kind go through
 * its {@link DecisionCoalescer} when it has one: a decision waits behind the
 * call in flight with the others that came meanwhile, and they go as one call.
 * The gates and what a failure tells the connection stay per decision, as
 * here.
 * <p>
 * On the limiter's connection, a runner serves one kind of limit. When that
 * kind's writes are durable (see {@link ReplicaAcks}), a write ({@link #run},
 * {@link #runAsync}) returns once the replicas of its primary hold it, and is
 * refused before it is sent while they do not acknowledge; a read
 * ({@link #read}) never waits for them. A call that fails tells the connection
 * why (see {@link RedisFailovers}): a {@code READONLY} answer moves it off a
 * demoted primary, and on a Cluster any failure asks for a fresh topology.
 */
final class ScriptRunner {

	/** Arguments that are already bytes, as they are. */
	private static final RedisSerializer<Object> ENCODED = new RedisSerializer<>() {

		@Override
		public byte[] serialize(@Nullable Object value) {
			return (byte[]) Objects.requireNonNull(value, "the limiter passes its arguments as bytes");
		}

		@Override
		public @Nullable Object deserialize(byte @Nullable [] bytes) {
			return bytes;
		}

	};

	private final StringRedisTemplate redis;

	private final @Nullable LimiterLettuceConnectionFactory own;

	private final @Nullable RedisSilence silence;

	/** Waits for the replicas after each write, when this runner's kind is durable. */
	private final @Nullable ReplicaAcks acks;

	private final @Nullable RedisFailovers failovers;

	private final @Nullable ClusterParts clusterParts;

	/**
	 * Creates a runner that no gate holds back, for tests of the scripts.
	 * @param connectionFactory the connection factory; functions are used only
	 * when it is the limiter's own
	 */
	ScriptRunner(RedisConnectionFactory connectionFactory) {
		this(connectionFactory, null);
	}

	/**
	 * Creates a runner.
	 * @param connectionFactory the connection factory; functions are used only
	 * when it is the limiter's own
	 * @param silence the gate of the limiter's connection, or {@code null} for none
	 */
	ScriptRunner(RedisConnectionFactory connectionFactory, @Nullable RedisSilence silence) {
		this(connectionFactory, silence, null, null, null);
	}

	private ScriptRunner(RedisConnectionFactory connectionFactory, @Nullable RedisSilence silence,
			@Nullable ReplicaAcks acks, @Nullable RedisFailovers failovers, @Nullable ClusterParts clusterParts) {
		// This constructor calls afterPropertiesSet(): the template is ready to use.
		this.redis = new StringRedisTemplate(connectionFactory);
		this.own = ClassUtils.isPresent("io.lettuce.core.RedisClient", ScriptRunner.class.getClassLoader())
				? Lettuce.own(connectionFactory) : null;
		this.silence = silence;
		this.acks = acks;
		this.failovers = failovers;
		this.clusterParts = clusterParts;
	}

	/**
	 * Creates a runner on the limiter's connection, held back while Redis is
	 * silent, for calls that belong to no kind of limit (provider pauses).
	 * @param connection the limiter's connection
	 */
	ScriptRunner(RedisLimiterConnection connection) {
		this(connection, null);
	}

	/**
	 * Creates a runner on the limiter's connection for one kind of limit, held
	 * back while Redis is silent, whose writes wait for the replicas when the
	 * kind is durable.
	 * @param connection the limiter's connection
	 * @param kind the kind of limit, or {@code null} for none
	 */
	ScriptRunner(RedisLimiterConnection connection, @Nullable LimitKind kind) {
		this(connection.connectionFactory(), connection.silence(),
				(kind != null && connection.durable(kind)) ? connection.acks() : null, connection.failoversFollower(),
				connection.clusterParts());
	}

	/**
	 * Runs a script. Failures of Redis are thrown as Spring's
	 * {@link org.springframework.dao.DataAccessException}s either way.
	 * @param script the script
	 * @param keys its keys
	 * @param args its arguments
	 * @param <T> the type of its reply
	 * @return the reply: a {@code Long}, or a list of {@code Long}s and {@code String}s
	 */
	<T> @Nullable T run(LimiterScript<T> script, List<String> keys, List<String> args) {
		return run(script, keys, encode(args));
	}

	/**
	 * Runs a script that writes nothing: like {@link #run(LimiterScript, List, List)},
	 * without waiting for replicas.
	 * @param script the script
	 * @param keys its keys
	 * @param args its arguments
	 * @param <T> the type of its reply
	 * @return the reply
	 */
	<T> @Nullable T read(LimiterScript<T> script, List<String> keys, List<String> args) {
		return call(script, keys, encode(args), null);
	}

	/**
	 * Runs a script that writes nothing, its arguments already encoded.
	 * @param script the script
	 * @param keys its keys
	 * @param args its arguments, UTF-8
	 * @param <T> the type of its reply
	 * @return the reply
	 */
	<T> @Nullable T read(LimiterScript<T> script, List<String> keys, byte[][] args) {
		return call(script, keys, args, null);
	}

	private static byte[][] encode(List<String> args) {
		byte[][] encoded = new byte[args.size()][];
		for (int i = 0; i < encoded.length; i++) {
			encoded[i] = args.get(i).getBytes(StandardCharsets.UTF_8);
		}
		return encoded;
	}

	/**
	 * Returns where the Redis this runner calls keeps each key: a Cluster's
	 * masters on the limiter's connection to a cluster, else one part.
	 * @return the parts
	 */
	StoreParts parts() {
		return (this.clusterParts != null) ? this.clusterParts : StoreParts.ONE;
	}

	/**
	 * Returns whether {@link #runAsync} can send scripts without waiting: on the
	 * limiter's own Lettuce connection only.
	 * @return whether scripts run asynchronously
	 */
	boolean runsAsync() {
		return this.own != null;
	}

	/**
	 * Runs a script like {@link #run(LimiterScript, List, List)}, without waiting
	 * for its reply.
	 * @param script the script
	 * @param keys its keys
	 * @param args its arguments
	 * @param <T> the type of its reply
	 * @return the reply; failures of Redis fail the stage as Spring's
	 * {@link org.springframework.dao.DataAccessException}s
	 * @throws IllegalStateException if {@link #runsAsync()} is {@code false}
	 */
	<T> CompletionStage<@Nullable T> runAsync(LimiterScript<T> script, List<String> keys, List<String> args) {
		return runAsync(script, keys, encode(args));
	}

	/**
	 * Runs a script with its arguments already encoded, without waiting for its
	 * reply: what {@link #run(LimiterScript, List, byte[][])} sends, through
	 * Lettuce's asynchronous API.
	 * @param script the script
	 * @param keys its keys
	 * @param args its arguments, UTF-8; not changed
	 * @param <T> the type of its reply
	 * @return the reply; failures of Redis fail the stage as Spring's
	 * {@link org.springframework.dao.DataAccessException}s
	 * @throws IllegalStateException if {@link #runsAsync()} is {@code false}
	 */
	@SuppressWarnings("unchecked")
	<T> CompletionStage<@Nullable T> runAsync(LimiterScript<T> script, List<String> keys, byte[][] args) {
		LimiterLettuceConnectionFactory own = this.own;
		if (own == null) {
			throw new IllegalStateException("Scripts run asynchronously on the limiter's own Lettuce connection only");
		}
		RuntimeException refused = refusal(keys, this.acks);
		if (refused != null) {
			return CompletableFuture.failedFuture(refused);
		}
		long sentIn = generation();
		// Its SilenceWatch tells silence from a busy application, for these calls as for the synchronous ones.
		CompletionStage<@Nullable T> reply = AsyncCalls.started(() -> {
			DecisionCoalescer coalescer = own.coalescer();
			if (coalescer != null && LuaScripts.batched(script)) {
				return (CompletionStage<T>) coalescer.submit(script, keys, args);
			}
			return (CompletionStage<T>) LettuceFunctions.runAsync(own, script, keys, args);
		});
		ReplicaAcks waitFor = this.acks;
		CompletionStage<@Nullable T> told = reply.handle((value, failure) -> {
			if (failure != null) {
				throw failed(AsyncCalls.cause(failure), sentIn);
			}
			return value;
		});
		return (waitFor == null) ? told
				: told.thenCompose((value) -> waitFor.confirm(keys.get(0)).thenApply((confirmed) -> value));
	}

	/**
	 * Returns why a call must not be sent now: Redis is silent, or the call is a
	 * durable write and the replicas of its primary do not acknowledge.
	 */
	private @Nullable RuntimeException refusal(List<String> keys, @Nullable ReplicaAcks waitFor) {
		RedisSilence silence = this.silence;
		if (silence != null) {
			if (keys.isEmpty() ? silence.isSilent() : silence.isSilent(keys.get(0))) {
				return keys.isEmpty() ? silence.refusal() : silence.refusal(keys.get(0));
			}
		}
		return (waitFor != null && !keys.isEmpty()) ? waitFor.refusal(keys.get(0)) : null;
	}

	/**
	 * Tells the connection why a call failed: a {@code READONLY} answer from a
	 * demoted primary moves it (on one server; a Cluster routes by its topology),
	 * and any failure on a Cluster asks for a fresh topology. Returns the
	 * failure to throw: one met during a failover the connection told of says
	 * so (see {@link AnnouncedRedisFailure}), and so does one refused before
	 * the connection came back from the outage, sent in an earlier
	 * {@code sentIn}.
	 */
	private RuntimeException failed(RuntimeException sentCallFailure, long sentIn) {
		// The call passed the gates, and was sent or is about to be: without an answer, Redis may apply it yet.
		RuntimeException failure = UnansweredCallException.marked(sentCallFailure);
		ClusterParts cluster = this.clusterParts;
		if (cluster != null) {
			cluster.refreshSoon();
		}
		RedisFailovers follow = this.failovers;
		if (follow != null) {
			String readOnly = (cluster == null) ? readOnly(failure) : null;
			if (readOnly != null) {
				follow.readOnly(readOnly);
			}
		}
		return AnnouncedRedisFailure.told(failure, follow, this.silence, sentIn);
	}

	/** Which outage of the connection a call is sent after (see {@link RedisFailovers#generation()}). */
	private long generation() {
		RedisFailovers follow = this.failovers;
		return (follow != null) ? follow.generation() : RedisFailovers.UNKNOWN_GENERATION;
	}

	/** The {@code READONLY} answer in a failure's causes, or {@code null}. */
	private static @Nullable String readOnly(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = (cause.getCause() != cause) ? cause.getCause() : null) {
			String message = cause.getMessage();
			if (message != null && message.startsWith("READONLY")) {
				return message;
			}
		}
		return null;
	}

	/**
	 * Runs a script with its arguments already encoded, as UTF-8: for callers
	 * that keep the unchanging ones encoded rather than format them per call.
	 * @param script the script
	 * @param keys its keys
	 * @param args its arguments, UTF-8; not changed
	 * @param <T> the type of its reply
	 * @return the reply: a {@code Long}, or a list of {@code Long}s and {@code String}s
	 */
	<T> @Nullable T run(LimiterScript<T> script, List<String> keys, byte[][] args) {
		return call(script, keys, args, this.acks);
	}

	/** Sends a call behind the gates, tells the connection of a failure, and waits for the replicas if asked. */
	private <T> @Nullable T call(LimiterScript<T> script, List<String> keys, byte[][] args,
			@Nullable ReplicaAcks waitFor) {
		RedisSilence silence = this.silence;
		if (silence == null) {
			return send(script, keys, args);
		}
		RuntimeException refused = refusal(keys, waitFor);
		if (refused != null) {
			throw refused;
		}
		long sentIn = generation();
		T reply;
		try {
			reply = send(script, keys, args);
		}
		catch (QueryTimeoutException | RedisConnectionFailureException ex) {
			if (this.own == null) {
				// Another client's timeout measures Redis; the limiter's own SilenceWatch already told.
				silence.fellSilent(String.valueOf(ex.getMessage()));
			}
			throw failed(ex, sentIn);
		}
		catch (RuntimeException ex) {
			throw failed(ex, sentIn);
		}
		if (waitFor != null) {
			waitFor.await(keys.get(0));
		}
		return reply;
	}

	@SuppressWarnings("unchecked")
	private <T> @Nullable T send(LimiterScript<T> script, List<String> keys, byte[][] args) {
		LimiterLettuceConnectionFactory own = this.own;
		DecisionCoalescer coalescer = (own != null) ? own.coalescer() : null;
		if (coalescer != null && LuaScripts.batched(script)) {
			Runnable alone = coalescer.alone(keys);
			if (alone == null) {
				// Waits with the decisions queued beside it, behind the call in flight: see DecisionCoalescer.
				return (T) coalescer.await(script, keys, args);
			}
			try {
				// Nothing in flight: a call of its own, on this thread; whatever comes meanwhile queues behind it.
				return sendAlone(script, keys, args);
			}
			finally {
				alone.run();
			}
		}
		return sendAlone(script, keys, args);
	}

	@SuppressWarnings("unchecked")
	private <T> @Nullable T sendAlone(LimiterScript<T> script, List<String> keys, byte[][] args) {
		LimiterLettuceConnectionFactory own = this.own;
		if (own != null && own.functionsLoaded()) {
			Object reply = LettuceFunctions.call(own, script, keys, args);
			if (reply != LettuceFunctions.MISSING) {
				return (T) reply;
			}
		}
		// What StringRedisTemplate#execute(script, keys, args) does, with arguments already bytes.
		return this.redis.execute(script.eval(), ENCODED, (RedisSerializer<T>) RedisSerializer.string(), keys,
				(Object[]) args);
	}

	/** Only loaded with Lettuce present: the factory class needs it. */
	private static final class Lettuce {

		static @Nullable LimiterLettuceConnectionFactory own(RedisConnectionFactory factory) {
			return (factory instanceof LimiterLettuceConnectionFactory own) ? own : null;
		}

	}

}
