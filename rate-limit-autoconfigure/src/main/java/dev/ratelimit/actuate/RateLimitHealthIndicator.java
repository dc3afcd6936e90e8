package dev.ratelimit.actuate;

import java.time.Duration;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.data.redis.connection.RedisConnection;

import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.memory.InMemoryRateLimitBackend;
import dev.ratelimit.redis.RedisLimiterConnection;
import dev.ratelimit.resilience.CircuitBreakingBackend;

/**
 * The health of the limiter's backend, contributed as {@code rateLimit}. The
 * in-memory backend is always up. The Redis backend is up when a {@code PING}
 * through the limiter's own connection answers within the limiter's command
 * timeout, the bound every decision is held to, and down otherwise: a Redis
 * that answers the application in two seconds is no use to a limiter allowed
 * 100 ms. When the backend sits behind a circuit breaker, its state and failure
 * rate are reported too, so that a limiter applying its failure modes is never
 * mistaken for one deciding on Redis.
 * <p>
 * Details: {@code backend} ({@code memory}, {@code redis}, or the class of a
 * custom backend, whose health is unknown), {@code circuitBreaker}
 * ({@code CLOSED}, {@code OPEN}, {@code HALF_OPEN}...), {@code failureRate} (in
 * percent, once the breaker has seen its minimum number of calls) and
 * {@code notPermittedCalls}.
 */
public class RateLimitHealthIndicator implements HealthIndicator {

	private final RateLimitBackend backend;

	private final @Nullable RedisLimiterConnection redis;

	private final Duration timeout;

	/**
	 * Creates the indicator.
	 * @param backend the limiter's backend
	 * @param redis the limiter's Redis connection, or {@code null} without the Redis backend
	 * @param timeout the limiter's command timeout
	 */
	public RateLimitHealthIndicator(RateLimitBackend backend, @Nullable RedisLimiterConnection redis,
			Duration timeout) {
		this.backend = backend;
		this.redis = redis;
		this.timeout = timeout;
	}

	@Override
	public Health health() {
		Health.Builder builder = backendHealth();
		if (this.backend instanceof CircuitBreakingBackend breaking) {
			CircuitBreaker breaker = breaking.getCircuitBreaker();
			CircuitBreaker.Metrics metrics = breaker.getMetrics();
			builder.withDetail("circuitBreaker", breaker.getState().name());
			// resilience4j reports -1 until the breaker has seen enough calls to judge.
			if (metrics.getFailureRate() >= 0) {
				builder.withDetail("failureRate", metrics.getFailureRate());
			}
			builder.withDetail("notPermittedCalls", metrics.getNumberOfNotPermittedCalls());
		}
		return builder.build();
	}

	private Health.Builder backendHealth() {
		if (this.backend instanceof InMemoryRateLimitBackend) {
			return Health.up().withDetail("backend", "memory");
		}
		if (this.redis != null) {
			return ping(this.redis).withDetail("backend", "redis");
		}
		return Health.unknown().withDetail("backend", this.backend.getClass().getName());
	}

	private Health.Builder ping(RedisLimiterConnection redis) {
		long start = System.nanoTime();
		try (RedisConnection connection = redis.connectionFactory().getConnection()) {
			connection.ping();
		}
		catch (RuntimeException ex) {
			return Health.down(ex);
		}
		Duration took = Duration.ofNanos(System.nanoTime() - start);
		if (took.compareTo(this.timeout) > 0) {
			// Only a factory without the limiter's own timeout (Jedis) lets a PING run this long.
			return Health.down()
				.withDetail("error", "PING took " + took.toMillis() + " ms, more than the limiter's timeout of "
						+ this.timeout.toMillis() + " ms");
		}
		return Health.up();
	}

}
