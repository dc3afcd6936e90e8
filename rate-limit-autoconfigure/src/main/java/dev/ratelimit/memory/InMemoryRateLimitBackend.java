package dev.ratelimit.memory;

import java.util.concurrent.TimeUnit;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;

import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.core.TokenBucket;

/**
 * Keeps limiter state in this process: the embedded default, exact for one
 * instance. Each key's bucket is guarded by its own monitor, so callers only
 * contend when they share a key.
 * <p>
 * Memory is bounded twice: a bucket left idle until it would be full again is
 * dropped (it would start full anyway, so nothing is lost), and at most
 * {@code maxKeys} buckets are kept, the least useful evicted first. Eviction by
 * size forgets a bucket that was not full, which can admit that key's caller
 * early; size the bound above the number of concurrently active keys.
 */
public final class InMemoryRateLimitBackend implements RateLimitBackend {

	/**
	 * Caffeine leaves an entry's expiry alone when a read would move it by less
	 * than one second, so an entry can expire up to that much early. Keeping a
	 * bucket that much longer than it takes to fill never drops one that is not
	 * full yet; a full bucket kept longer changes no decision.
	 */
	private static final long EXPIRY_TOLERANCE_NANOS = TimeUnit.SECONDS.toNanos(1);

	private final TimeSource time;

	private final Cache<String, Bucket> buckets;

	/**
	 * Creates a backend.
	 * @param time the clock
	 * @param maxKeys the most buckets kept at once
	 */
	public InMemoryRateLimitBackend(TimeSource time, long maxKeys) {
		if (maxKeys <= 0) {
			throw new IllegalArgumentException("maximum number of keys must be positive, was " + maxKeys);
		}
		this.time = time;
		this.buckets = Caffeine.newBuilder()
			.maximumSize(maxKeys)
			.expireAfter(new UntilFull())
			.ticker(() -> time.currentTimeMicros() * 1_000L)
			.executor(Runnable::run)
			.build();
	}

	@Override
	public Decision tryConsume(RateLimitPolicy policy, String key, long cost) {
		long now = this.time.currentTimeMicros();
		Bucket bucket = this.buckets.get(key, (k) -> new Bucket(policy, now));
		synchronized (bucket) {
			return TokenBucket.consume(policy, bucket.state, cost, now);
		}
	}

	/**
	 * Returns the number of buckets currently held (an estimate while other
	 * threads run).
	 * @return the number of keys
	 */
	public long size() {
		this.buckets.cleanUp();
		return this.buckets.estimatedSize();
	}

	private static final class Bucket {

		final TokenBucket.State state;

		final long idleNanos;

		Bucket(RateLimitPolicy policy, long now) {
			this.state = new TokenBucket.State(policy, now);
			// Below 2^60: policies keep capacity x period under 2^50 microseconds.
			this.idleNanos = policy.fullRefillMicros() * 1_000L + EXPIRY_TOLERANCE_NANOS;
		}

	}

	/**
	 * Expires a bucket once it has been idle long enough to refill completely.
	 */
	private static final class UntilFull implements Expiry<String, Bucket> {

		@Override
		public long expireAfterCreate(String key, Bucket bucket, long currentTime) {
			return bucket.idleNanos;
		}

		@Override
		public long expireAfterUpdate(String key, Bucket bucket, long currentTime, long currentDuration) {
			return bucket.idleNanos;
		}

		@Override
		public long expireAfterRead(String key, Bucket bucket, long currentTime, long currentDuration) {
			return bucket.idleNanos;
		}

	}

}
