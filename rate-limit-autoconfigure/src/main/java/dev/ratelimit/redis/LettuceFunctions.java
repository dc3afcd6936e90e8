package dev.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.AsyncExecutions;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceExceptionConverter;
import org.springframework.data.redis.core.script.RedisScript;

import dev.ratelimit.core.AsyncCalls;

/**
 * Redis functions through Lettuce, which Spring Data Redis does not offer:
 * {@code FUNCTION LOAD} of the limiter's library on every master, and
 * {@code FCALL} of one of its functions on the connection Spring Data Redis
 * shares (routed by its first key on a cluster, as {@code EVALSHA} is).
 * Replies are what {@code StringRedisTemplate} returns for a script (numbers
 * as {@code Long}, bulk strings as {@code String}) and failures are Spring's
 * {@link DataAccessException}s, so that a caller cannot tell the two paths
 * apart.
 * <p>
 * Scripts are also sent asynchronously here ({@link #callAsync},
 * {@link #evalAsync}), for callers that must not wait for the reply: the same
 * commands, the same busy timeout, the same replies and failures.
 */
final class LettuceFunctions {

	/** What {@link #call} returns when the server does not have the function. */
	static final Object MISSING = new Object();

	private static final LettuceExceptionConverter EXCEPTIONS = new LettuceExceptionConverter();

	private LettuceFunctions() {
	}

	/**
	 * Loads the library into every master (replicas receive it from theirs) and
	 * calls its ping function on each, which proves that {@code FCALL} is allowed
	 * too. Replacing a library of the same name is harmless: the name is a hash
	 * of the text.
	 * @param connection a connection of the limiter's factory, to a standalone
	 * server or a cluster
	 * @param timeout how long to wait for each node
	 * @return {@code null} when loaded, else why Redis refused (an error reply:
	 * a server before 7, or one that forbids functions)
	 * @throws DataAccessException when Redis did not answer
	 */
	@SuppressWarnings("unchecked")
	static @Nullable String load(RedisConnection connection, Duration timeout) {
		Object commands = connection.getNativeConnection();
		String library = LuaScripts.library();
		String ping = LuaScripts.pingFunction();
		try {
			if (commands instanceof RedisAdvancedClusterAsyncCommands<?, ?> cluster) {
				// Every master, through the cluster connection's own node connections.
				RedisAdvancedClusterAsyncCommands<byte[], byte[]> nodes = (RedisAdvancedClusterAsyncCommands<byte[], byte[]>) cluster;
				awaitAll(nodes.upstream().commands().functionLoad(library, true), timeout);
				awaitAll(nodes.upstream().commands().fcall(ping, ScriptOutputType.INTEGER), timeout);
			}
			else {
				RedisClusterAsyncCommands<byte[], byte[]> server = (RedisClusterAsyncCommands<byte[], byte[]>) commands;
				long nanos = timeout.toNanos();
				LettuceFutures.awaitOrCancel(server.functionLoad(library, true), nanos, TimeUnit.NANOSECONDS);
				LettuceFutures.awaitOrCancel(server.fcall(ping, ScriptOutputType.INTEGER), nanos, TimeUnit.NANOSECONDS);
			}
			return null;
		}
		catch (RedisCommandExecutionException ex) {
			if (isPassing(ex)) {
				// The server's state, not its answer to functions: the attempt fails and is made again.
				throw translate(ex);
			}
			return ex.getMessage();
		}
		catch (RuntimeException ex) {
			throw translate(ex);
		}
	}

	private static boolean isPassing(RedisCommandExecutionException failure) {
		return ErrorReplies.isPassing(String.valueOf(failure.getMessage()));
	}

	/**
	 * Calls a script's function.
	 * @param factory the limiter's factory, whose library is loaded
	 * @param script the script
	 * @param keys its keys
	 * @param args its arguments, UTF-8
	 * @return the reply, or {@link #MISSING} when the server does not have the
	 * function: nothing ran, and the factory sends scripts until the library is
	 * loaded again
	 * @throws DataAccessException when Redis failed
	 */
	static @Nullable Object call(LimiterLettuceConnectionFactory factory, LimiterScript<?> script, List<String> keys,
			byte[][] args) {
		try {
			RedisFuture<Object> reply = factory.sharedCommands().fcall(script.function(), output(script), bytes(keys),
					args);
			return strings(LettuceFutures.awaitOrCancel(reply, factory.busyTimeout().toNanos(),
					TimeUnit.NANOSECONDS));
		}
		catch (RedisCommandExecutionException ex) {
			if (isMissingFunction(ex)) {
				factory.functionsLost();
				return MISSING;
			}
			throw translate(ex);
		}
		catch (RuntimeException ex) {
			if (ex instanceof DataAccessException) {
				throw ex;
			}
			throw translate(ex);
		}
	}

	/**
	 * Calls a script's function like {@link #call}, without waiting for the reply.
	 * The reply is bounded by the busy timeout as a synchronous call's wait is:
	 * by Lettuce, whose command timeout on the limiter's connection is that
	 * timeout (see {@link LimiterTimeoutSource}), on its own timer wheel, with no
	 * second timer per call.
	 * @param factory the limiter's factory, whose library is loaded
	 * @param script the script
	 * @param keys its keys
	 * @param args its arguments, UTF-8
	 * @return the reply, or {@link #MISSING} when the server does not have the
	 * function; Redis failures fail the stage as {@link DataAccessException}s
	 */
	static CompletionStage<@Nullable Object> callAsync(LimiterLettuceConnectionFactory factory,
			LimiterScript<?> script, List<String> keys, byte[][] args) {
		RedisFuture<Object> reply = factory.sharedCommands().fcall(script.function(), output(script), bytes(keys), args);
		return reply.handle((value, failure) -> {
			if (failure == null) {
				return strings(value);
			}
			RuntimeException cause = AsyncCalls.cause(failure);
			if (cause instanceof RedisCommandExecutionException ex && isMissingFunction(ex)) {
				factory.functionsLost();
				return MISSING;
			}
			throw translate(cause);
		});
	}

	/**
	 * Runs a script without waiting for the reply: as its function while the
	 * factory's library is loaded, else, and when the server lost it, as
	 * {@code EVALSHA} (see {@link #evalAsync}).
	 * @param factory the limiter's factory
	 * @param script the script
	 * @param keys its keys
	 * @param args its arguments, UTF-8
	 * @return the reply; Redis failures fail the stage as {@link DataAccessException}s
	 */
	static CompletionStage<@Nullable Object> runAsync(LimiterLettuceConnectionFactory factory,
			LimiterScript<?> script, List<String> keys, byte[][] args) {
		if (!factory.functionsLoaded()) {
			return evalAsync(factory, script, keys, args);
		}
		return callAsync(factory, script, keys, args).thenCompose((value) -> (value != MISSING)
				? CompletableFuture.completedStage(value) : evalAsync(factory, script, keys, args));
	}

	/**
	 * Sends a script as {@code EVALSHA}, and as {@code EVAL} with its text when
	 * the server's script cache lost it, without waiting for the reply: what
	 * Spring Data Redis does synchronously for {@code StringRedisTemplate}.
	 * @param factory the limiter's factory
	 * @param script the script
	 * @param keys its keys
	 * @param args its arguments, UTF-8
	 * @return the reply; Redis failures fail the stage as {@link DataAccessException}s
	 */
	static CompletionStage<@Nullable Object> evalAsync(LimiterLettuceConnectionFactory factory,
			LimiterScript<?> script, List<String> keys, byte[][] args) {
		RedisClusterAsyncCommands<byte[], byte[]> commands = factory.sharedCommands();
		RedisScript<?> eval = script.eval();
		ScriptOutputType output = output(script);
		byte[][] keyBytes = bytes(keys);
		return commands.evalsha(eval.getSha1(), output, keyBytes, args)
			.handle((value, failure) -> {
				if (failure == null) {
					return CompletableFuture.completedStage(strings(value));
				}
				RuntimeException cause = AsyncCalls.cause(failure);
				if (!(cause instanceof RedisNoScriptException)) {
					throw translate(cause);
				}
				// Not in the script cache (a restart, SCRIPT FLUSH): nothing ran, so the text is sent once.
				return commands.eval(eval.getScriptAsString(), output, keyBytes, args)
					.handle((text, textFailure) -> {
						if (textFailure != null) {
							throw translate(AsyncCalls.cause(textFailure));
						}
						return strings(text);
					});
			})
			.thenCompose((stage) -> stage);
	}

	private static ScriptOutputType output(LimiterScript<?> script) {
		Class<?> resultType = Objects.requireNonNull(script.eval().getResultType(), "every script declares its result");
		return List.class.isAssignableFrom(resultType) ? ScriptOutputType.MULTI
				: ScriptOutputType.INTEGER;
	}

	/**
	 * Returns whether an error is Redis' reply to an {@code FCALL} of a function
	 * it does not have: refused before anything ran.
	 * @param failure the error
	 * @return whether the function was missing
	 */
	static boolean isMissingFunction(Throwable failure) {
		String message = failure.getMessage();
		return message != null && message.startsWith("ERR Function not found");
	}

	private static void awaitAll(AsyncExecutions<?> executions, Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		for (CompletableFuture<?> future : executions.futures()) {
			try {
				future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
			}
			catch (ExecutionException ex) {
				if (ex.getCause() instanceof RuntimeException cause) {
					throw cause;
				}
				throw new RedisSystemException(String.valueOf(ex.getCause()), ex.getCause());
			}
			catch (TimeoutException ex) {
				future.cancel(true);
				throw new RedisCommandTimeoutException("No reply within " + timeout.toMillis() + " ms");
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new RedisSystemException("Interrupted while loading the rate limit functions", ex);
			}
		}
	}

	static RuntimeException translate(RuntimeException failure) {
		if (failure instanceof DataAccessException) {
			return failure;
		}
		DataAccessException translated = EXCEPTIONS.convert(failure);
		return (translated != null) ? translated : new RedisSystemException(failure.getMessage(), failure);
	}

	private static byte[][] bytes(List<String> values) {
		byte[][] bytes = new byte[values.size()][];
		for (int i = 0; i < bytes.length; i++) {
			bytes[i] = values.get(i).getBytes(StandardCharsets.UTF_8);
		}
		return bytes;
	}

	/** Bulk strings as Strings, in lists too, as StringRedisTemplate deserializes a script's reply. */
	private static @Nullable Object strings(@Nullable Object value) {
		if (value instanceof byte[] bulk) {
			return new String(bulk, StandardCharsets.UTF_8);
		}
		if (value instanceof List<?> list) {
			List<Object> converted = new ArrayList<>(list.size());
			for (Object element : list) {
				converted.add(strings(element));
			}
			return converted;
		}
		return value;
	}

}
