package dev.ratelimit.redis;

import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

import io.lettuce.core.RedisException;
import io.netty.channel.Channel;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.Causes;
import dev.ratelimit.core.StoreParts;
import dev.ratelimit.redis.LimiterChannels.HostAndPort;

/**
 * Follows the limiter's connection through failovers and tells of them: one
 * warning when the primary (or a Cluster node) goes, naming why, and one line
 * when the limiter's connection is back on a server that answers, with how
 * long it took. What it reacts to:
 * <ul>
 * <li>a Sentinel's {@code +switch-master} (see {@link SentinelWatch}): every
 * channel on the old master is closed, so that it reconnects to the new one
 * (Lettuce asks the sentinels on each reconnect), and one that lands on the
 * old master again (the sentinel asked had not heard yet) is closed again, for
 * {@link #EXPECTATION_MILLIS};</li>
 * <li>a {@code READONLY} answer: the server is a replica now, its primary was
 * replaced; every channel is closed once (at most once a second), and
 * reconnects to the primary the sentinels (or the DNS name) give;</li>
 * <li>a channel that closes without the limiter closing it: the primary (or a
 * Cluster node) was killed or cut off; Lettuce reconnects on its own, at least
 * every {@link LimiterClientResources#LONGEST_RECONNECT_DELAY}, and a Cluster
 * reads its topology again (see {@link ClusterParts}). A call that Lettuce
 * refused as not connected in the instant before the channel's end reached
 * its handlers tells of the same loss, first (see {@link #duringFailover}).</li>
 * </ul>
 * One warning per outage: the first of these begins it, and what follows
 * before decisions are back is part of it. A call refused while the
 * connection was down, whose failure is read after decisions came back, was
 * part of the outage that ended, not a new one.
 * Counts each by {@link Cause}, for the {@code rate.limit.redis.failovers}
 * meter and the health indicator.
 */
final class RedisFailovers {

	private static final Log logger = LogFactory.getLog(RedisFailovers.class);

	/** How long after a switch a channel that lands anywhere but the new master is closed again. */
	static final long EXPECTATION_MILLIS = 30_000;

	private static final long READONLY_PAUSE_NANOS = 1_000_000_000L;

	/** How Lettuce's refusal of a call begins when its channel is not active. */
	private static final String NOT_CONNECTED = "Currently not connected";

	/** What {@link #duringFailover} is passed by a caller that did not read the generation before its call. */
	static final long UNKNOWN_GENERATION = -1;

	/** Why the limiter's connection moved. */
	enum Cause {

		/** A sentinel announced a new master ({@code +switch-master}). */
		SWITCH_MASTER("switch-master"),

		/** The server answered {@code READONLY}: it became a replica. */
		READONLY("readonly"),

		/** A connection closed without the limiter closing it. */
		CONNECTION_LOST("connection-lost");

		private final String tag;

		Cause(String tag) {
			this.tag = tag;
		}

		/** @return the meter's tag value */
		String tag() {
			return this.tag;
		}

	}

	private final LimiterChannels channels;

	private final String address;

	private final Map<Cause, AtomicLong> counts = new EnumMap<>(Cause.class);

	private final AtomicLong lastReadOnlyNanos = new AtomicLong(System.nanoTime() - READONLY_PAUSE_NANOS);

	/** The master Sentinel replaced: a channel that lands there is closed again, until the deadline. */
	private volatile @Nullable HostAndPort replaced;

	private volatile long replacedUntilNanos;

	/** When the outage now told of began, or 0 when decisions are on Redis. */
	private volatile long outageSinceNanos;

	/** How many outages ended: a call sent before the last end belongs to an outage told of. */
	private volatile long ended;

	/** The Cluster node whose loss the outage is, whose slots must move or come back. */
	private volatile @Nullable HostAndPort lostNode;

	/** A Cluster's masters, or {@code null} for one server. */
	private volatile @Nullable StoreParts clusterParts;

	/** The sentinels: Lettuce asks them where the master is, on channels of the limiter's resources too. */
	private volatile List<HostAndPort> sentinels = List.of();

	private volatile @Nullable Last last;

	private volatile Runnable onLost = () -> {
	};

	private volatile boolean closed;

	/**
	 * Orders the beginnings and ends of outages, and their log lines. A lock, not
	 * a monitor: a decision's thread (virtual, with
	 * {@code spring.threads.virtual.enabled}) takes it and logs under it, and
	 * logging may park on the appender's lock, which pins a virtual thread
	 * inside a monitor to its carrier on JDK 21 to 23.
	 */
	private final ReentrantLock lock = new ReentrantLock();

	/**
	 * Creates the follower of a connection's channels.
	 * @param channels the limiter's channels
	 * @param address the server as logs name it
	 */
	RedisFailovers(LimiterChannels channels, String address) {
		this.channels = channels;
		this.address = address;
		for (Cause cause : Cause.values()) {
			this.counts.put(cause, new AtomicLong());
		}
		channels.onActive(this::active);
		channels.onLost(this::lost);
	}

	/**
	 * Has the follower treat the connection as a Cluster's: a lost node's
	 * outage ends when its slots have moved to a node that answers, or when it
	 * answers again itself, not when any channel opens.
	 * @param parts the Cluster's masters
	 */
	void cluster(StoreParts parts) {
		this.clusterParts = parts;
	}

	/**
	 * Has the follower ignore the channels to the sentinels, which Lettuce opens
	 * on each reconnect to ask where the master is: they are no server of the
	 * limiter's calls.
	 * @param sentinels the sentinels' addresses
	 */
	void sentinels(List<HostAndPort> sentinels) {
		this.sentinels = List.copyOf(sentinels);
	}

	private boolean isSentinel(Channel channel) {
		for (HostAndPort sentinel : this.sentinels) {
			if (sentinel.matches(channel.remoteAddress())) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Tells that the Cluster's topology changed: a lost node whose slots moved
	 * elsewhere no longer stops decisions on them.
	 */
	void topologyChanged() {
		StoreParts parts = this.clusterParts;
		HostAndPort node = this.lostNode;
		if (parts != null && node != null && this.outageSinceNanos != 0 && !parts.keepsKeys(node.toString())) {
			end("The Redis Cluster moved the slots of " + node + " to the nodes that replaced it");
		}
	}

	/**
	 * Sets what runs when a channel is lost (a Cluster reads its topology again).
	 * @param action runs on the channel's event loop; must not block
	 */
	void onLost(Runnable action) {
		this.onLost = action;
	}

	/**
	 * A sentinel announced that the master moved.
	 * @param master the master's name
	 * @param from the old master
	 * @param to the new master
	 * @param sentinel the sentinel that said so
	 */
	void switched(String master, HostAndPort from, HostAndPort to, String sentinel) {
		this.lock.lock();
		try {
			if (from.equals(this.replaced) && System.nanoTime() - this.replacedUntilNanos < 0) {
				// The other sentinels announce the same switch.
				return;
			}
			this.replaced = from;
			this.replacedUntilNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(EXPECTATION_MILLIS);
			begin(Cause.SWITCH_MASTER, "Sentinel " + sentinel + " reports that master '" + master + "' moved from "
					+ from + " to " + to, to.toString());
			closeConnectedTo(from);
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * A limiter call was answered {@code READONLY}: the server it went to is a
	 * replica now.
	 * @param message the answer
	 */
	void readOnly(String message) {
		long now = System.nanoTime();
		long before = this.lastReadOnlyNanos.get();
		if (now - before < READONLY_PAUSE_NANOS || !this.lastReadOnlyNanos.compareAndSet(before, now)) {
			return;
		}
		begin(Cause.READONLY, "Redis at " + this.address + " answered the rate limiter '" + message
				+ "': it is a replica now, its primary failed over", null);
		closeConnectedTo(null);
	}

	/** Closes the channels to a server, or all of them; each reconnects. */
	private void closeConnectedTo(@Nullable HostAndPort server) {
		this.channels.forEachOpen((channel) -> {
			if (server == null || server.matches(channel.remoteAddress())) {
				channel.close();
			}
		});
	}

	private void begin(Cause cause, String why, @Nullable String to) {
		this.lock.lock();
		try {
			counter(cause).incrementAndGet();
			this.last = new Last(cause, why, Instant.now());
			if (this.outageSinceNanos == 0) {
				this.outageSinceNanos = System.nanoTime();
			}
			logger.warn(why + "; the rate limiter " + ((to != null) ? "moves its connection to " + to
					: "reconnects") + ", and each limit's failure mode applies to the calls it cannot make meanwhile");
		}
		finally {
			this.lock.unlock();
		}
	}

	private void active(Channel channel) {
		if (isSentinel(channel)) {
			return;
		}
		HostAndPort remote = HostAndPort.of(channel.remoteAddress());
		HostAndPort old = this.replaced;
		if (old != null && System.nanoTime() - this.replacedUntilNanos < 0 && old.matches(channel.remoteAddress())) {
			// Landed on the old master: the sentinel asked had not heard of the switch yet.
			channel.close();
			return;
		}
		HostAndPort node = this.lostNode;
		if (this.clusterParts == null || node == null || node.matches(channel.remoteAddress())) {
			end("The rate limiter's connection is on Redis at " + remote);
		}
	}

	private void end(String what) {
		this.lock.lock();
		try {
			long since = this.outageSinceNanos;
			if (since != 0) {
				this.ended++;
				this.outageSinceNanos = 0;
				this.lostNode = null;
				logger.info(what + " " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since)
						+ " ms after the failover began; decisions are back on Redis");
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	private void lost(Channel channel) {
		if (this.closed || isSentinel(channel)) {
			return;
		}
		beginLoss(channel);
		this.onLost.run();
	}

	/**
	 * Begins the loss of a channel that closed before its end reached the
	 * limiter, if one did; under the lock that {@link #beginLoss} takes, so that
	 * the channel's own telling, on its event loop, is either done or finds
	 * this one done.
	 */
	private void lostFoundByCall() {
		this.lock.lock();
		try {
			if (this.outageSinceNanos == 0 && !this.closed) {
				Channel channel = this.channels.closedUnheard((open) -> !isSentinel(open));
				if (channel != null) {
					beginLoss(channel);
				}
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	/** One loss per outage: the limiter's connections to one server all end together. */
	private void beginLoss(Channel channel) {
		this.lock.lock();
		try {
			if (this.outageSinceNanos == 0) {
				HostAndPort remote = HostAndPort.of(channel.remoteAddress());
				this.lostNode = remote;
				begin(Cause.CONNECTION_LOST, "The rate limiter lost its connection to Redis at " + remote, null);
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Returns how many times the limiter's connection moved, by cause.
	 * @param cause the cause
	 * @return the count since start-up
	 */
	long count(Cause cause) {
		return counter(cause).get();
	}

	/** Every cause is counted from the start. */
	private AtomicLong counter(Cause cause) {
		return Objects.requireNonNull(this.counts.get(cause), "every cause has a count");
	}

	/**
	 * Returns the last failover, for the health indicator.
	 * @return the last one, or {@code null} when there was none
	 */
	@Nullable Last last() {
		return this.last;
	}

	/**
	 * Returns whether a failover told of has not ended yet: no channel is back.
	 * @return whether one is under way
	 */
	boolean underWay() {
		return this.outageSinceNanos != 0;
	}

	/**
	 * Returns how many outages have ended, for a call to read before it is sent
	 * and pass to {@link #duringFailover} if it fails.
	 * @return the count since start-up
	 */
	long generation() {
		return this.ended;
	}

	/**
	 * Returns a call's failure as one of the failover under way, which was told
	 * of already, or the failure itself when none is. A call that Lettuce
	 * refused as not connected while no outage is under way either found a
	 * channel closed before its end reached the limiter, and tells of that
	 * loss now (the call is the first to know), or was refused before the last
	 * outage ended, and is part of that one.
	 * @param failure the call's failure
	 * @param sentIn the {@link #generation()} read before the call was sent, or
	 * {@link #UNKNOWN_GENERATION}: a refusal while every channel is open is then
	 * taken for one sent before the reconnection
	 * @return the failure to throw
	 */
	RuntimeException duringFailover(RuntimeException failure, long sentIn) {
		if (failure instanceof AnnouncedRedisFailure) {
			return failure;
		}
		boolean notConnected = refusedNotConnected(failure);
		if (notConnected && this.outageSinceNanos == 0) {
			lostFoundByCall();
		}
		Last failover = this.last;
		if (failover == null) {
			return failure;
		}
		if (this.outageSinceNanos != 0) {
			return new AnnouncedRedisFailure("Redis is failing over (" + failover.description() + "): "
					+ Causes.describe(failure), failure);
		}
		if (notConnected && sentIn != this.ended) {
			return new AnnouncedRedisFailure("Refused while the rate limiter reconnected (" + failover.description()
					+ "): " + Causes.describe(failure), failure);
		}
		return failure;
	}

	/** Whether Lettuce refused the call unsent because its connection's channel was not active. */
	private static boolean refusedNotConnected(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = (cause.getCause() != cause) ? cause.getCause() : null) {
			String message = cause.getMessage();
			if (cause instanceof RedisException && message != null && message.startsWith(NOT_CONNECTED)) {
				return true;
			}
		}
		return false;
	}

	/** Stops telling: the application is stopping and closes every channel. */
	void close() {
		this.closed = true;
	}

	/**
	 * A failover as the health indicator shows it.
	 * @param cause why
	 * @param description what happened
	 * @param at when
	 */
	record Last(Cause cause, String description, Instant at) {
	}

}
