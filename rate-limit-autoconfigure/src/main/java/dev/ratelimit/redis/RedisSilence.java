package dev.ratelimit.redis;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.data.redis.RedisConnectionFailureException;

/**
 * Whether Redis answers the limiter's connection, the one gate every limiter
 * call to Redis passes, whatever kind of limit it decides. Redis is
 * <em>silent</em> once it has sent nothing for {@code rate-limit.redis.timeout}
 * while limiter calls waited for it (see {@link SilenceWatch}): a frozen,
 * stalled or unreachable server, not a slow reply to one call. While it is
 * silent every limiter call fails at once, without being sent, so that each
 * limit's failure mode applies without delay, and a probe ({@code PING}) is
 * kept in flight; the first bytes Redis sends again, the probe's answer or any
 * other, open the gate, so decisions are back on Redis one round trip after it
 * answers again.
 * <p>
 * With Lettuce, the limiter's own connection tells silence from a busy
 * application on the thread that reads Redis's replies (see
 * {@link SilenceWatch}). With another client (Jedis) a call that times out or
 * cannot connect closes the gate, as that client's own read timeout measures
 * Redis, not the caller's scheduling.
 */
public final class RedisSilence {

	private static final Log logger = LogFactory.getLog(RedisSilence.class);

	private final Duration timeout;

	private final AtomicBoolean silent = new AtomicBoolean();

	/** Set once, before the first call: runs the probe while Redis is silent. */
	private volatile Runnable startProbing = () -> {
	};

	private volatile long silentSinceNanos;

	private volatile String reason = "";

	/**
	 * Creates an open gate.
	 * @param timeout how long Redis may send nothing while calls wait before it is silent
	 */
	public RedisSilence(Duration timeout) {
		this.timeout = timeout;
	}

	/**
	 * Returns whether Redis is silent now: limiter calls fail at once.
	 * @return whether it is silent
	 */
	public boolean isSilent() {
		return this.silent.get();
	}

	/**
	 * Returns how long Redis may send nothing while calls wait.
	 * @return the timeout
	 */
	public Duration timeout() {
		return this.timeout;
	}

	/**
	 * Records that Redis sent something: the gate opens if it was closed.
	 */
	public void heard() {
		if (this.silent.get() && this.silent.compareAndSet(true, false)) {
			long silentFor = System.nanoTime() - this.silentSinceNanos;
			logger.info("Redis answers the rate limiter again after " + TimeUnit.NANOSECONDS.toMillis(silentFor)
					+ " ms; decisions are back on it");
		}
	}

	/**
	 * Records that Redis went silent: the gate closes and the probe starts.
	 * @param why what was seen, for the log and the calls refused meanwhile
	 */
	public void fellSilent(String why) {
		if (this.silent.compareAndSet(false, true)) {
			this.silentSinceNanos = System.nanoTime();
			this.reason = why;
			logger.warn("Redis does not answer the rate limiter: " + why
					+ "; each limit's failure mode applies until it answers again (probing with PING)");
			this.startProbing.run();
		}
	}

	/**
	 * Says why Redis counts as silent, for a call refused meanwhile or a health check.
	 * @return the text
	 */
	public String describe() {
		return "Redis has not answered the rate limiter (" + this.reason
				+ "); calls fail at once until it answers a probe";
	}

	/**
	 * Returns the failure a call gets while Redis is silent.
	 * @return the exception to throw
	 */
	RedisConnectionFailureException refusal() {
		return new RedisConnectionFailureException(describe());
	}

	/**
	 * Sets what starts the probe when Redis goes silent.
	 * @param probe starts probing, on a thread of its own; returns at once
	 */
	void onSilence(Runnable probe) {
		this.startProbing = probe;
	}

}
