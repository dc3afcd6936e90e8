package dev.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.core.script.RedisScript;

import dev.ratelimit.core.RateLimitConfigurationException;

/**
 * Connects the limiter to Redis and loads its scripts, on a daemon thread of
 * its own, so that no request thread ever waits for a connect. At start-up
 * the caller waits for the first attempt at most the connect timeout; when it
 * has not succeeded by then, the application starts anyway, one warning says
 * that the failure modes apply, and the thread keeps trying with a growing
 * pause (1 s, 2 s, 4 s, 8 s, then every 10 s) until it succeeds or is closed.
 * <p>
 * An attempt opens the connection, {@code SCRIPT LOAD}s every script (on a
 * Cluster Lettuce sends it to every node, which also opens the connections to
 * them), prepares the connection further (the limiter's Lettuce connection
 * loads its function library, see {@link LettuceFunctions}) and sends a
 * {@code PING} (on a Cluster, to every node through Spring Data Redis' own node
 * connections, which the health check uses too). Only then are calls let
 * through. {@link #prepareAgain()} repeats the preparation alone, in the
 * background, when a server lost what it loaded.
 * <p>
 * A server that refuses the scripts themselves ({@code NOPERM} of an ACL
 * without {@code SCRIPT LOAD}, a proxy or a server without Lua) can decide no
 * limit: at start-up that stops the application with a clear message rather
 * than let every limit fall to its failure mode for good (fail-open limits would
 * be silently off); found later, it is logged at error level and the connector
 * keeps trying, in case the permission is granted.
 */
final class LimiterConnector implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(LimiterConnector.class);

	private static final Duration FIRST_PAUSE = Duration.ofSeconds(1);

	private static final Duration LONGEST_PAUSE = Duration.ofSeconds(10);

	private final Supplier<RedisConnection> connect;

	private final Consumer<RedisConnection> prepare;

	private final Runnable opened;

	private final String address;

	private final Duration connectTimeout;

	private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor((task) -> {
		Thread connector = new Thread(task, "rate-limit-redis-connect");
		connector.setDaemon(true);
		return connector;
	});

	private volatile boolean connected;

	private volatile @Nullable RuntimeException lastFailure;

	/** The error reply by which Redis refused the scripts at the last attempt, or {@code null}. */
	private volatile @Nullable String scriptsRefused;

	/** Guarded by this: whether start-up warned that it could not connect. */
	private boolean warned;

	/** Only read and written on the connector's thread. */
	private Duration pause = FIRST_PAUSE;

	/** Whether {@link #prepareAgain()} is under way: callers that see the loss at once ask once. */
	private final AtomicBoolean preparingAgain = new AtomicBoolean();

	/** Only read and written on the connector's thread. */
	private Duration preparePause = FIRST_PAUSE;

	/** Whether a probe of a silent Redis is under way. */
	private final AtomicBoolean probing = new AtomicBoolean();

	/**
	 * Creates a connector.
	 * @param connect opens a connection, waiting for the connect if need be
	 * @param prepare prepares a connection after the scripts loaded, on the
	 * connector's thread; throws when Redis does not answer
	 * @param opened lets calls through once an attempt succeeded
	 * @param address where the connection goes, for the log
	 * @param connectTimeout how long start-up waits for the first attempt
	 */
	LimiterConnector(Supplier<RedisConnection> connect, Consumer<RedisConnection> prepare, Runnable opened,
			String address, Duration connectTimeout) {
		this.connect = connect;
		this.prepare = prepare;
		this.opened = opened;
		this.address = address;
		this.connectTimeout = connectTimeout;
	}

	/**
	 * Makes the first attempt and waits for it at most the connect timeout; on
	 * failure logs one warning and leaves the connector trying.
	 */
	void connectAtStartup() {
		Future<?> first = this.thread.submit(this::attempt);
		try {
			first.get(this.connectTimeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			// Still connecting: it goes on, on the connector's thread.
		}
		catch (ExecutionException ex) {
			// The attempt keeps its failure in lastFailure.
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		String refused = this.scriptsRefused;
		if (refused != null && !this.connected) {
			throw new RateLimitConfigurationException("Redis at " + this.address
					+ " refuses the rate limiter's Lua scripts (" + refused + "): no limit can be decided on it",
					"Give the limiter's Redis user the scripting commands (+evalsha +eval +script|load, and +fcall "
							+ "+function|load for rate-limit.redis.functions), use a Redis server that runs Lua "
							+ "scripts, or set rate-limit.backend=memory.",
					this.lastFailure);
		}
		synchronized (this) {
			if (this.connected) {
				return;
			}
			this.warned = true;
			RuntimeException failure = this.lastFailure;
			logger.warn("Rate limiter could not connect to Redis at " + this.address + ": "
					+ ((failure != null) ? message(failure)
							: "no answer within " + this.connectTimeout.toMillis()
									+ " ms (rate-limit.redis.connect-timeout)")
					+ ". Starting anyway: each policy's failure mode applies until Redis answers (local "
					+ "policies are decided in this instance, fail-closed ones refuse their calls, fail-open ones "
					+ "let them through unlimited); connecting again in the background.");
		}
	}

	boolean isConnected() {
		return this.connected;
	}

	@Nullable RuntimeException lastFailure() {
		return this.lastFailure;
	}

	String address() {
		return this.address;
	}

	/**
	 * Stops trying; an attempt under way is interrupted.
	 */
	@Override
	public void close() {
		this.thread.shutdownNow();
	}

	private void attempt() {
		long start = System.nanoTime();
		long connectedAt;
		try (RedisConnection connection = this.connect.get()) {
			connectedAt = System.nanoTime();
			loadScriptsOrSayWhy(connection);
			this.prepare.accept(connection);
			connection.ping();
		}
		catch (VirtualMachineError ex) {
			throw ex;
		}
		catch (Throwable ex) {
			// Errors too (a class failing to initialise in the client): never stop trying for good.
			RuntimeException failure = (ex instanceof RuntimeException runtime) ? runtime
					: new IllegalStateException(ex.toString(), ex);
			this.lastFailure = failure;
			retryLater(failure);
			return;
		}
		this.opened.run();
		long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
		long connecting = TimeUnit.NANOSECONDS.toMillis(connectedAt - start);
		synchronized (this) {
			// Under the start-up's lock: "connected again" only ever follows its warning.
			this.connected = true;
			this.lastFailure = null;
			if (this.warned) {
				logger.info("Rate limiter connected to Redis at " + this.address + " (attempt took " + took
						+ " ms); decisions are made on Redis from now on");
			}
			else if (logger.isDebugEnabled()) {
				logger.debug("Rate limiter connected to Redis at " + this.address + " in " + connecting
						+ " ms and loaded its scripts, " + took + " ms in all");
			}
		}
	}

	/**
	 * Prepares the connection again in the background, at once and then with a
	 * growing pause until it succeeds: a server lost what the preparation loaded
	 * (the function library), and calls fall back until it is back.
	 */
	void prepareAgain() {
		if (!this.preparingAgain.compareAndSet(false, true)) {
			return;
		}
		try {
			this.thread.execute(this::prepareAttempt);
		}
		catch (RejectedExecutionException ex) {
			// Closed: the application is stopping.
		}
	}

	private void prepareAttempt() {
		// Cleared first: a loss seen while this attempt runs asks for one more, never for none.
		this.preparingAgain.set(false);
		try (RedisConnection connection = this.connect.get()) {
			this.prepare.accept(connection);
		}
		catch (RuntimeException ex) {
			if (logger.isDebugEnabled()) {
				logger.debug("Rate limiter could not prepare its Redis connection at " + this.address
						+ " again; next attempt in " + this.preparePause.toMillis() + " ms", ex);
			}
			this.preparingAgain.set(true);
			try {
				this.thread.schedule(this::prepareAttempt, this.preparePause.toNanos(), TimeUnit.NANOSECONDS);
			}
			catch (RejectedExecutionException closed) {
				return;
			}
			this.preparePause = longer(this.preparePause);
			return;
		}
		this.preparePause = FIRST_PAUSE;
	}

	/**
	 * Probes Redis on the connector's thread while it is silent: one probe at a
	 * time, a new one at once when the last failed, but no more than one per
	 * silence timeout. A probe in flight while Redis is frozen is answered as
	 * soon as it runs again, which opens the gate.
	 * @param silence the gate, open again once a probe succeeds
	 * @param ping sends one probe, waiting for its answer; throws when it fails
	 */
	void probe(RedisSilence silence, Runnable ping) {
		if (!this.probing.compareAndSet(false, true)) {
			return;
		}
		try {
			this.thread.execute(() -> probeAttempt(silence, ping));
		}
		catch (RejectedExecutionException ex) {
			// Closed: the application is stopping.
		}
	}

	private void probeAttempt(RedisSilence silence, Runnable ping) {
		long start = System.nanoTime();
		try {
			ping.run();
		}
		catch (RuntimeException ex) {
			if (logger.isDebugEnabled()) {
				logger.debug("Rate limiter's probe of Redis at " + this.address + " failed: " + message(ex));
			}
		}
		if (!silence.isSilent()) {
			this.probing.set(false);
			// Silent again between the answer and this line: probe again rather than miss it.
			if (silence.isSilent()) {
				probe(silence, ping);
			}
			return;
		}
		long pause = Math.max(0, silence.timeout().toNanos() - (System.nanoTime() - start));
		try {
			this.thread.schedule(() -> probeAttempt(silence, ping), pause, TimeUnit.NANOSECONDS);
		}
		catch (RejectedExecutionException ex) {
			// Closed: the application is stopping.
		}
	}

	private static Duration longer(Duration pause) {
		Duration doubled = pause.multipliedBy(2);
		return (doubled.compareTo(LONGEST_PAUSE) > 0) ? LONGEST_PAUSE : doubled;
	}

	/**
	 * Loads the scripts; a refusal of the server (not a failure to answer) is
	 * kept for start-up, and logged at error level once per distinct reply.
	 */
	private void loadScriptsOrSayWhy(RedisConnection connection) {
		try {
			loadScripts(connection);
			this.scriptsRefused = null;
		}
		catch (RuntimeException ex) {
			String refused = ErrorReplies.refusal(ex);
			if (refused != null && !refused.equals(this.scriptsRefused)) {
				logger.error("Redis at " + this.address + " refuses the rate limiter's Lua scripts (" + refused
						+ "): no limit can be decided on it, and each policy's failure mode applies to every call "
						+ "(fail-open policies are not enforced). Give the limiter's Redis user +evalsha +eval "
						+ "+script|load; the limiter keeps trying.");
			}
			this.scriptsRefused = refused;
			throw ex;
		}
	}

	private static void loadScripts(RedisConnection connection) {
		for (RedisScript<?> script : LuaScripts.all()) {
			String sha = connection.scriptingCommands()
				.scriptLoad(script.getScriptAsString().getBytes(StandardCharsets.UTF_8));
			if (!script.getSha1().equals(sha)) {
				// EVALSHA would then miss every time and fall back to EVAL: say so rather than run slowly.
				throw new IllegalStateException("Redis loaded a rate limit script as " + sha + ", expected "
						+ script.getSha1());
			}
		}
	}

	private void retryLater(RuntimeException failure) {
		if (logger.isDebugEnabled()) {
			logger.debug("Rate limiter still cannot connect to Redis at " + this.address + "; next attempt in "
					+ this.pause.toMillis() + " ms", failure);
		}
		try {
			this.thread.schedule(this::attempt, this.pause.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (RejectedExecutionException ex) {
			// Closed: the application is stopping.
			return;
		}
		this.pause = longer(this.pause);
	}

	/**
	 * Returns a failure's message with its root cause, which says why.
	 * @param failure the failure
	 * @return the text
	 */
	static String message(Throwable failure) {
		Throwable cause = failure;
		StringBuilder text = new StringBuilder(String.valueOf(failure.getMessage()));
		// Spring's "Unable to connect to Redis" says little; the root cause says why.
		while (cause.getCause() != null && cause.getCause() != cause) {
			cause = cause.getCause();
		}
		if (cause != failure) {
			text.append(" (").append(cause).append(')');
		}
		return text.toString();
	}

}
