package dev.ratelimit.redis;

import java.util.List;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.data.redis.connection.RedisConnectionFactory;

import dev.ratelimit.client.LocalPauseStore;
import dev.ratelimit.client.PauseStore;
import dev.ratelimit.core.AnnouncedOutage;

/**
 * Provider pauses shared by every instance of a Redis: one key per provider,
 * {@code prefix:{%client:name}:pause}, holding the end of the pause in Redis'
 * own milliseconds ({@code TIME}), so that instance clocks never matter, with a
 * TTL that ends with it. A pause is written by a script that keeps the later
 * of the pause in force and the new one ({@code SET key T PX}); a read returns
 * the time left, from the server's clock. No storage key of a limit takes this
 * form ({@code %} is not allowed in a limit's name).
 * <p>
 * Every pause is kept in this process too. When Redis cannot answer, the
 * failure is logged (once until it answers again) and the local pauses apply:
 * a Redis outage never blocks a call to a provider, and never makes this
 * instance forget a pause it was told of.
 */
public final class RedisPauseStore implements PauseStore {

	private static final Log logger = LogFactory.getLog(RedisPauseStore.class);

	/** Keeps the later end: a short pause never cuts a longer one short. Returns the time left in ms. */
	private static final LimiterScript<Long> PAUSE = LuaScripts.pause();

	private static final LimiterScript<Long> REMAINING = LuaScripts.pauseRemaining();

	private final ScriptRunner scripts;

	private final String keyPrefix;

	private final LocalPauseStore local;

	private volatile boolean failing;

	/** Whether the failure was an outage the connection told of: its end is told by the connection too. */
	private volatile boolean failingAnnounced;

	/**
	 * Creates the store.
	 * @param connectionFactory the limiter's connection factory
	 * @param keyPrefix the prefix of the limiter's keys
	 * @param local the pauses of this process, the fallback
	 */
	public RedisPauseStore(RedisConnectionFactory connectionFactory, String keyPrefix, LocalPauseStore local) {
		this(new ScriptRunner(connectionFactory), keyPrefix, local);
	}

	/**
	 * Creates the store on the limiter's connection, which fails calls at once
	 * while Redis is silent (see {@link RedisSilence}).
	 * @param connection the limiter's connection
	 * @param keyPrefix the prefix of the limiter's keys
	 * @param local the pauses of this process, the fallback
	 */
	public RedisPauseStore(RedisLimiterConnection connection, String keyPrefix, LocalPauseStore local) {
		this(new ScriptRunner(connection), keyPrefix, local);
	}

	private RedisPauseStore(ScriptRunner scripts, String keyPrefix, LocalPauseStore local) {
		this.scripts = scripts;
		this.keyPrefix = keyPrefix;
		this.local = local;
	}

	@Override
	public long remainingMicros(String client) {
		long local = this.local.remainingMicros(client);
		try {
			Long millis = this.scripts.run(REMAINING, List.of(key(client)), List.of());
			answered();
			long shared = (millis != null) ? millis * 1_000L : 0;
			if (shared > local) {
				// Remembered here: the pause still holds if Redis stops answering.
				this.local.pause(client, shared);
				return shared;
			}
		}
		catch (RuntimeException ex) {
			failed(client, ex);
		}
		return local;
	}

	@Override
	public void pause(String client, long micros) {
		if (micros <= 0) {
			return;
		}
		this.local.pause(client, micros);
		// Whole milliseconds, rounded up: never shorter than asked.
		long millis = Math.max(1, -Math.floorDiv(-micros, 1_000L));
		try {
			this.scripts.run(PAUSE, List.of(key(client)), List.of(Long.toString(millis)));
			answered();
		}
		catch (RuntimeException ex) {
			failed(client, ex);
		}
	}

	@Override
	public boolean isShared() {
		return true;
	}

	/**
	 * Returns the key of a provider's pause.
	 * @param client the provider's name
	 * @return the key
	 */
	String key(String client) {
		return this.keyPrefix + ":{%client:" + client + "}:pause";
	}

	private void answered() {
		if (this.failing) {
			this.failing = false;
			String message = "Provider pauses are shared through Redis again";
			if (!this.failingAnnounced) {
				logger.info(message);
			}
			else if (logger.isDebugEnabled()) {
				// The connection's own line says that decisions are back.
				logger.debug(message);
			}
		}
	}

	private void failed(String client, RuntimeException ex) {
		if (!this.failing) {
			this.failing = true;
			this.failingAnnounced = AnnouncedOutage.in(ex);
			String message = "Cannot share the pauses of provider '" + client + "' through Redis ("
					+ LimiterConnector.message(ex) + "); pauses apply to this instance only until Redis answers";
			if (!this.failingAnnounced) {
				logger.warn(message);
			}
			else if (logger.isDebugEnabled()) {
				// The connection told of the outage already, with one warning for every part of the limiter.
				logger.debug(message);
			}
		}
		else if (logger.isDebugEnabled()) {
			logger.debug("Redis still cannot share the pauses of provider '" + client + "'", ex);
		}
	}

}
