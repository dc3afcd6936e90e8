package dev.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;
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
 */
final class ScriptRunner {

	/** Arguments that are already bytes, as they are. */
	private static final RedisSerializer<Object> ENCODED = new RedisSerializer<>() {

		@Override
		public byte[] serialize(@Nullable Object value) {
			return (byte[]) value;
		}

		@Override
		public @Nullable Object deserialize(byte @Nullable [] bytes) {
			return bytes;
		}

	};

	private final StringRedisTemplate redis;

	private final @Nullable LimiterLettuceConnectionFactory own;

	private final @Nullable RedisSilence silence;

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
		// This constructor calls afterPropertiesSet(): the template is ready to use.
		this.redis = new StringRedisTemplate(connectionFactory);
		this.own = ClassUtils.isPresent("io.lettuce.core.RedisClient", ScriptRunner.class.getClassLoader())
				? Lettuce.own(connectionFactory) : null;
		this.silence = silence;
	}

	/**
	 * Creates a runner on the limiter's connection, held back while Redis is silent.
	 * @param connection the limiter's connection
	 */
	ScriptRunner(RedisLimiterConnection connection) {
		this(connection.connectionFactory(), connection.silence());
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

	private static byte[][] encode(List<String> args) {
		byte[][] encoded = new byte[args.size()][];
		for (int i = 0; i < encoded.length; i++) {
			encoded[i] = args.get(i).getBytes(StandardCharsets.UTF_8);
		}
		return encoded;
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
		RedisSilence silence = this.silence;
		if (silence != null && silence.isSilent()) {
			return CompletableFuture.failedFuture(silence.refusal());
		}
		// Its SilenceWatch tells silence from a busy application, for these calls as for the synchronous ones.
		return AsyncCalls.started(() -> {
			if (!own.functionsLoaded()) {
				return (CompletionStage<T>) LettuceFunctions.evalAsync(own, script, keys, args);
			}
			return LettuceFunctions.callAsync(own, script, keys, args)
				.thenCompose((reply) -> (CompletionStage<T>) ((reply != LettuceFunctions.MISSING)
						? CompletableFuture.completedStage(reply) : LettuceFunctions.evalAsync(own, script, keys, args)));
		});
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
		RedisSilence silence = this.silence;
		if (silence == null) {
			return send(script, keys, args);
		}
		if (silence.isSilent()) {
			throw silence.refusal();
		}
		if (this.own != null) {
			// Its SilenceWatch tells silence from a busy application; a timeout here says nothing more.
			return send(script, keys, args);
		}
		try {
			return send(script, keys, args);
		}
		catch (QueryTimeoutException | RedisConnectionFailureException ex) {
			silence.fellSilent(ex.getMessage());
			throw ex;
		}
	}

	@SuppressWarnings("unchecked")
	private <T> @Nullable T send(LimiterScript<T> script, List<String> keys, byte[][] args) {
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
