package dev.ratelimit.redis;

import java.net.SocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.RedisConnectionFailureException;

import dev.ratelimit.core.StoreParts;

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
 * <p>
 * <strong>A Cluster's nodes are silent one by one.</strong> On a cluster
 * ({@link #cluster}), a node that sends nothing closes the gate for the keys
 * of its slots only: calls on the other masters go on, and the node is probed
 * on its own connection until it answers, or until its slots have moved to a
 * node that answers (its replica promoted). One warning per node, one line
 * when it answers again.
 */
public final class RedisSilence {

	private static final Log logger = LogFactory.getLog(RedisSilence.class);

	private final Duration timeout;

	/** Redis as the warning names it: {@code Redis at host:port}, or {@code Redis}. */
	private final String redis;

	private final AtomicBoolean silent = new AtomicBoolean();

	/** Set once, before the first call: runs the probe while Redis is silent. */
	private volatile Runnable startProbing = () -> {
	};

	private volatile long silentSinceNanos;

	private volatile String reason = "";

	/** On a cluster: the silent nodes by name, with since when and why; empty elsewhere. */
	private final Map<String, Silent> silentParts = new ConcurrentHashMap<>();

	/** Whether any node is silent: the one read of a call while none is. */
	private volatile boolean anyPartSilent;

	/** On a cluster: names the node at a channel's remote end; {@code null} for one server. */
	private volatile @Nullable Function<SocketAddress, String> partOfChannel;

	/** On a cluster: the node that keeps each key. */
	private volatile StoreParts parts = StoreParts.ONE;

	/** On a cluster: probes one silent node, on a thread of its own; returns at once. */
	private volatile Consumer<String> probePart = (part) -> {
	};

	/**
	 * Creates an open gate.
	 * @param timeout how long Redis may send nothing while calls wait before it is silent
	 */
	public RedisSilence(Duration timeout) {
		this(timeout, "");
	}

	/**
	 * Creates an open gate whose log lines name the server.
	 * @param timeout how long Redis may send nothing while calls wait before it is silent
	 * @param address the server as logs name it, such as {@code redis.internal:6379}; empty for none
	 */
	public RedisSilence(Duration timeout, String address) {
		this.timeout = timeout;
		this.redis = address.isEmpty() ? "Redis" : "Redis at " + address;
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
	 * Has the gate track a Redis Cluster's nodes one by one (see the class
	 * documentation). Set once, before the first call.
	 * @param parts the node that keeps each key
	 * @param partOfChannel names the node at a channel's remote end
	 * @param probe probes one silent node until it answers
	 */
	void cluster(StoreParts parts, Function<SocketAddress, String> partOfChannel, Consumer<String> probe) {
		this.parts = parts;
		this.partOfChannel = partOfChannel;
		this.probePart = probe;
	}

	/**
	 * Returns whether a call on a key must fail at once: Redis is silent, or,
	 * on a cluster, the node that keeps the key is.
	 * @param key the call's first key
	 * @return whether it is silent
	 */
	boolean isSilent(String key) {
		if (this.silent.get()) {
			return true;
		}
		return this.anyPartSilent && this.silentParts.containsKey(this.parts.partOf(key));
	}

	/**
	 * Returns the refusal of a call on a key while {@link #isSilent(String)}.
	 * @param key the call's first key
	 * @return the exception to throw
	 */
	RedisConnectionFailureException refusal(String key) {
		if (this.silent.get()) {
			return refusal();
		}
		String part = this.parts.partOf(key);
		Silent node = this.silentParts.get(part);
		return new AnnouncedRedisFailure("Redis node " + part + " has not answered the rate limiter ("
				+ ((node != null) ? node.why() : "silent") + "); calls on its keys fail at once until it answers a probe");
	}

	/**
	 * Returns the Cluster nodes silent now, with why.
	 * @return the nodes by name; empty when none is, and for one server
	 */
	public Map<String, String> silentNodes() {
		Map<String, String> nodes = new TreeMap<>();
		this.silentParts.forEach((part, node) -> nodes.put(part, node.why()));
		return nodes;
	}

	/**
	 * Returns whether Redis, or any node of a cluster, is silent now.
	 * @return whether anything is
	 */
	public boolean isAnySilent() {
		return this.silent.get() || this.anyPartSilent;
	}

	/**
	 * Records that a channel of the limiter's connection received something: the
	 * gate (of that node, on a cluster) opens if it was closed.
	 * @param remote the channel's remote address
	 */
	void heard(@Nullable SocketAddress remote) {
		Function<SocketAddress, String> naming = this.partOfChannel;
		if (naming == null || remote == null) {
			heard();
			return;
		}
		if (this.anyPartSilent) {
			partHeard(naming.apply(remote));
		}
	}

	/**
	 * Records that a channel of the limiter's connection sent nothing while
	 * calls waited: the gate (of that node, on a cluster) closes.
	 * @param remote the channel's remote address
	 * @param why what was seen
	 */
	void fellSilent(@Nullable SocketAddress remote, String why) {
		Function<SocketAddress, String> naming = this.partOfChannel;
		if (naming == null || remote == null) {
			fellSilent(why);
			return;
		}
		String part = naming.apply(remote);
		if (this.silentParts.putIfAbsent(part, new Silent(System.nanoTime(), why)) == null) {
			this.anyPartSilent = true;
			logger.warn("Redis node " + part + " does not answer the rate limiter: " + why + "; each limit's failure "
					+ "mode applies to the keys of its slots until it answers again (probing with PING); the other "
					+ "nodes' keys are decided on Redis as before");
			this.probePart.accept(part);
		}
	}

	/**
	 * Records that a silent node answered, or no longer keeps keys (its slots
	 * moved to a node that answers): its gate opens.
	 * @param part the node
	 */
	void partHeard(String part) {
		Silent node = this.silentParts.remove(part);
		if (node != null) {
			this.anyPartSilent = !this.silentParts.isEmpty();
			logger.info("Redis node " + part + " answers the rate limiter again after "
					+ TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - node.sinceNanos())
					+ " ms; decisions on its keys are back on it");
		}
	}

	/**
	 * Records that a silent node keeps no keys any more: its slots moved to a
	 * node that answers (its replica promoted), so its silence stops no call.
	 * @param part the node
	 */
	void partReplaced(String part) {
		Silent node = this.silentParts.remove(part);
		if (node != null) {
			this.anyPartSilent = !this.silentParts.isEmpty();
			logger.info("Redis node " + part + " keeps no keys any more, its slots moved to a node that answers, "
					+ TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - node.sinceNanos())
					+ " ms after it fell silent; decisions on them are back on Redis");
		}
	}

	/**
	 * Returns whether a node is silent now.
	 * @param part the node
	 * @return whether it is
	 */
	boolean isPartSilent(String part) {
		return this.silentParts.containsKey(part);
	}

	/**
	 * Records that Redis sent something: the gate opens if it was closed.
	 */
	public void heard() {
		if (this.silent.get() && this.silent.compareAndSet(true, false)) {
			long silentFor = System.nanoTime() - this.silentSinceNanos;
			logger.info(this.redis + " answers the rate limiter again after " + TimeUnit.NANOSECONDS.toMillis(silentFor)
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
			logger.warn(this.redis + " does not answer the rate limiter: " + why
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
	public RedisConnectionFailureException refusal() {
		// The silence was told of with one warning: a refused call does not warn of it again.
		return new AnnouncedRedisFailure(describe());
	}

	/** A silent node: since when, and why. */
	private record Silent(long sinceNanos, String why) {
	}

	/**
	 * Sets what starts the probe when Redis goes silent.
	 * @param probe starts probing, on a thread of its own; returns at once
	 */
	void onSilence(Runnable probe) {
		this.startProbing = probe;
	}

}
