package dev.ratelimit.concurrency;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;

/**
 * Caps calls in flight in this instance with resilience4j's semaphore
 * bulkhead, one per policy and key. Waiting callers block on the semaphore for
 * at most the policy's max-wait: no queue beyond the waiting threads
 * themselves.
 * <p>
 * The registry of bulkheads is bounded: at most {@code maxKeys}, and a key
 * unused for ten minutes is dropped. A bulkhead dropped while its calls still
 * run is replaced by a fresh one, which can admit more than the cap for that
 * key; size the bound above the number of keys active at once.
 */
public final class LocalConcurrencyLimiter implements ConcurrencyLimiter {

	private final Cache<String, Bulkhead> bulkheads;

	/**
	 * Creates a limiter.
	 * @param maxKeys the most bulkheads kept
	 */
	public LocalConcurrencyLimiter(long maxKeys) {
		this.bulkheads = Caffeine.newBuilder().maximumSize(maxKeys).expireAfterAccess(10, TimeUnit.MINUTES).build();
	}

	@Override
	public Permit acquire(ConcurrencyPolicy policy, String key) {
		Bulkhead bulkhead = this.bulkheads.get(policy.name() + '\u0000' + ((key != null) ? key : ""),
				(k) -> Bulkhead.of(policy.name(), BulkheadConfig.custom()
					.maxConcurrentCalls(policy.permits())
					.maxWaitDuration(Duration.ofNanos(policy.maxWaitMicros() * 1_000L))
					.fairCallHandlingStrategyEnabled(true)
					.build()));
		if (!bulkhead.tryAcquirePermission()) {
			throw new ConcurrencyLimitExceededException(policy, 0);
		}
		return new Permit() {

			private final java.util.concurrent.atomic.AtomicBoolean released = new java.util.concurrent.atomic.AtomicBoolean();

			@Override
			public void release() {
				if (this.released.compareAndSet(false, true)) {
					bulkhead.onComplete();
				}
			}

		};
	}

	/**
	 * Returns the calls in flight for a key.
	 * @param policy the policy
	 * @param key the key
	 * @return the number of permits in use
	 */
	public int inUse(ConcurrencyPolicy policy, String key) {
		Bulkhead bulkhead = this.bulkheads.getIfPresent(policy.name() + '\u0000' + ((key != null) ? key : ""));
		return (bulkhead != null) ? policy.permits() - bulkhead.getMetrics().getAvailableConcurrentCalls() : 0;
	}

}
