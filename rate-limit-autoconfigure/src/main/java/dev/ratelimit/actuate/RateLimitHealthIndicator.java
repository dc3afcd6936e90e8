package dev.ratelimit.actuate;

import java.time.Duration;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.data.redis.connection.RedisConnection;

import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.memory.InMemoryRateLimitBackend;
import dev.ratelimit.redis.RedisLimiterConnection;

/**
 * The health of the limiter, contributed as {@code rateLimit}: what a Redis
 * outage means for the application, not merely whether Redis answers. The
 * in-memory backend is always up. On the Redis backend, Redis is available
 * when a {@code PING} through the limiter's own connection answers within the
 * limiter's timeout, the bound every decision is held to, and the limiter's own
 * calls to it succeed, as the {@link StoreAvailability} listener heard them
 * (a Redis can answer {@code PING} and refuse every script). While it is not,
 * the failure modes of the limits affected decide, and the status follows from
 * them:
 * <ul>
 * <li>{@code DOWN} when some limit affected fails closed (see
 * {@link FailClosedPolicies}): its calls are refused now;</li>
 * <li>{@code UP} otherwise: every call is still served (unlimited, or by a local
 * limiter), so the outage must not fail the application's aggregate health and
 * have an orchestrator restart a serving instance. The details say that Redis
 * is unavailable and why.</li>
 * </ul>
 * Not a custom status such as {@code DEGRADED}: Spring Boot's default status
 * aggregator ignores codes missing from its order, and monitoring that reads
 * the body expects {@code UP}. The contributor is in neither the liveness nor
 * the readiness group unless the application puts it there.
 * <p>
 * Details: {@code backend} ({@code memory}, {@code redis}, or the class of a
 * custom backend, whose health is unknown); with Redis, {@code redis}
 * ({@code available} or {@code unavailable}) and, while unavailable,
 * {@code error}, {@code failureModes}, {@code failClosed} (the fail-closed
 * policies affected, by kind, when there are any) and, when {@code PING}
 * answers but calls fail, {@code failingCalls} (the first failure by kind).
 * While Redis is silent (see {@link dev.ratelimit.redis.RedisSilence}) it is
 * unavailable without a {@code PING} of the indicator's own. On a Cluster the
 * failing calls name the masters they fail on ({@code on host:port: ...}).
 * While the replicas of a primary do not acknowledge the limiter's durable
 * writes, the kinds whose writes are durable count as failing, with
 * {@code laggingReplicas}. Once the limiter's connection has followed a
 * failover: {@code failovers} (by cause), {@code lastFailover} and
 * {@code failingOver} (whether one is under way).
 */
public class RateLimitHealthIndicator implements HealthIndicator {

	private final RateLimitBackend backend;

	private final @Nullable RedisLimiterConnection redis;

	private final Duration timeout;

	private final FailClosedPolicies failClosed;

	private final StoreAvailability stores;

	/**
	 * Creates the indicator.
	 * @param backend the limiter's backend
	 * @param redis the limiter's Redis connection, or {@code null} without the Redis backend
	 * @param timeout the limiter's command timeout
	 * @param failClosed the policies that refuse calls while Redis cannot answer
	 * @param stores whether the stores answer the limiter's calls, as the calls found them
	 */
	RateLimitHealthIndicator(RateLimitBackend backend, @Nullable RedisLimiterConnection redis,
			Duration timeout, FailClosedPolicies failClosed, StoreAvailability stores) {
		this.backend = backend;
		this.redis = redis;
		this.timeout = timeout;
		this.failClosed = failClosed;
		this.stores = stores;
	}

	@Override
	public Health health() {
		return backendHealth().build();
	}

	private Health.Builder backendHealth() {
		if (this.backend instanceof InMemoryRateLimitBackend) {
			return Health.up().withDetail("backend", "memory");
		}
		if (this.redis != null) {
			return redisHealth(this.redis).withDetail("backend", "redis");
		}
		return Health.unknown().withDetail("backend", this.backend.getClass().getName());
	}

	private Health.Builder redisHealth(RedisLimiterConnection redis) {
		return withFailovers(redisState(redis), redis);
	}

	private Health.Builder redisState(RedisLimiterConnection redis) {
		String error = unavailability(redis);
		if (error != null) {
			// Redis itself is out of reach: every kind's store with it.
			this.stores.unreachable();
			return outage(error, EnumSet.allOf(LimitKind.class));
		}
		this.stores.reachable();
		Map<LimitKind, String> failing = new EnumMap<>(LimitKind.class);
		failing.putAll(this.stores.failing());
		Map<String, String> silentNodes = redis.silence().silentNodes();
		if (!silentNodes.isEmpty()) {
			// Nodes of a cluster that send nothing: every kind's keys on them follow the failure modes.
			for (LimitKind kind : LimitKind.values()) {
				failing.putIfAbsent(kind, "Redis nodes " + String.join(", ", silentNodes.keySet())
						+ " do not answer; the keys of their slots follow the failure modes");
			}
		}
		Map<String, String> lagging = redis.laggingReplicas();
		if (!lagging.isEmpty()) {
			for (LimitKind kind : LimitKind.values()) {
				if (redis.durable(kind)) {
					failing.putIfAbsent(kind, "the replicas of Redis " + String.join(", ", lagging.keySet())
							+ " do not acknowledge its durable writes");
				}
			}
		}
		if (failing.isEmpty()) {
			// How the scripts go right now: FCALL of the library, or EVALSHA where Redis refused it.
			return Health.up()
				.withDetail("redis", "available")
				.withDetail("scripts", redis.usesFunctions() ? "FCALL" : "EVALSHA");
		}
		// PING answers, yet the limiter's own calls fail: an ACL, a read-only replica, a proxy, a node of a
		// cluster, replicas that do not acknowledge.
		Map<String, String> byKind = new LinkedHashMap<>();
		failing.forEach((kind, cause) -> byKind.put(FailClosedPolicies.detailName(kind), cause));
		Health.Builder builder = outage("Redis answers PING, but the limiter's calls to it fail", failing.keySet())
			.withDetail("failingCalls", byKind);
		if (!silentNodes.isEmpty()) {
			builder.withDetail("silentNodes", silentNodes);
		}
		return lagging.isEmpty() ? builder : builder.withDetail("laggingReplicas", lagging);
	}

	/**
	 * Adds the failovers the limiter's connection followed, once there was one:
	 * how many by cause, the last, and whether one is under way.
	 */
	private static Health.Builder withFailovers(Health.Builder builder, RedisLimiterConnection redis) {
		String last = redis.lastFailover();
		if (last == null) {
			return builder;
		}
		return builder.withDetail("failovers", redis.failovers())
			.withDetail("lastFailover", last)
			.withDetail("failingOver", redis.failingOver());
	}

	private Health.Builder outage(String error, Set<LimitKind> kinds) {
		boolean failOpen = this.failClosed.isEmpty(kinds);
		Health.Builder builder = failOpen ? Health.up() : Health.down();
		builder.withDetail("redis", "unavailable").withDetail("error", error);
		if (failOpen) {
			return builder.withDetail("failureModes", "applied until Redis answers; every policy affected fails "
					+ "open or local, so calls are served: without the shared limits, or by local limiters");
		}
		return builder
			.withDetail("failureModes", "applied until Redis answers; fail-closed policies refuse their calls "
					+ "(503), the others are served without the shared limits or by local limiters")
			.withDetail("failClosed", this.failClosed.names(kinds));
	}

	/**
	 * Returns why Redis cannot serve the limiter now, or {@code null} when it
	 * can. Never connects: before the limiter's connector has connected, the
	 * answer is its last failure.
	 */
	private @Nullable String unavailability(RedisLimiterConnection redis) {
		if (!redis.isConnected()) {
			String failure = redis.lastConnectFailure();
			return "not connected to " + redis.address() + " since start-up"
					+ ((failure != null) ? ": " + failure : "; connecting");
		}
		if (redis.silence().isSilent()) {
			return redis.silence().describe();
		}
		Ping first = ping(redis);
		// A PING can pay for opening a pooled (Jedis) or a cluster node's connection: only a second one says.
		Ping ping = (first.error() == null && first.took().compareTo(this.timeout) > 0) ? ping(redis) : first;
		if (ping.error() != null) {
			return ping.error();
		}
		if (ping.took().compareTo(this.timeout) > 0) {
			return "PING took " + ping.took().toMillis() + " ms, more than the limiter's timeout of "
					+ this.timeout.toMillis() + " ms";
		}
		return null;
	}

	private static Ping ping(RedisLimiterConnection redis) {
		long start = System.nanoTime();
		try (RedisConnection connection = redis.connectionFactory().getConnection()) {
			connection.ping();
		}
		catch (RuntimeException ex) {
			return new Ping(Duration.ofNanos(System.nanoTime() - start), ex.toString());
		}
		return new Ping(Duration.ofNanos(System.nanoTime() - start), null);
	}

	private record Ping(Duration took, @Nullable String error) {
	}

}
