package dev.ratelimit.benchmarks;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.ratelimiter.internal.AtomicRateLimiter;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.LimitListener;
import dev.ratelimit.insight.HeavyHitters;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Refill;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.memory.InMemoryRateLimitBackend;

/**
 * Nanoseconds per in-memory decision: our token bucket on
 * {@link InMemoryRateLimitBackend} against Bucket4j's local lock-free bucket,
 * Resilience4j's {@link AtomicRateLimiter}, Guava's
 * {@link com.google.common.util.concurrent.RateLimiter} and Alibaba Sentinel
 * (see {@link SentinelLimits}). Every limiter is set so high that it never
 * denies (nor waits), so the benchmark measures the cost of an admitted
 * decision, the common case.
 * <p>
 * {@code keys=1}: every call hits one key. {@code keys=10000}: calls are spread
 * over 10,000 keys with a Zipf (s = 1) distribution; the libraries without keys
 * get an array of 10,000 limiters indexed the same way (a cheaper lookup than
 * our string-keyed map, which is part of what a real caller pays), Sentinel's
 * hot-parameter rule ({@link #sentinel}) gets the key as its parameter. Sentinel's
 * plain flow rule, one resource, is {@link OneResource#sentinelResource}, on one
 * key only. Run with {@code -t 1} and {@code -t 2} for one and two threads.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class InMemoryDecisionBenchmark {

	/** Effectively unlimited: 10^9 tokens, refilled at 10^9 per second. */
	private static final long CAPACITY = 1_000_000_000L;

	@Param({ "1", "10000" })
	public int keys;

	private int[] indices;

	private String[] keyNames;

	private RateLimitPolicy policy;

	private InMemoryRateLimitBackend ours;

	private HeavyHitters heavyHitters;

	private Bucket[] bucket4j;

	private AtomicRateLimiter[] resilience4j;

	private com.google.common.util.concurrent.RateLimiter[] guava;

	@Setup(Level.Trial)
	public void setUp() {
		this.indices = (this.keys == 1) ? new int[KeyDistribution.LENGTH]
				: KeyDistribution.zipf(this.keys, 1.0, 42L);
		this.keyNames = new String[this.keys];
		for (int k = 0; k < this.keys; k++) {
			// The shape LimitKeys produces: prefix, policy, hash-tagged caller key.
			this.keyNames[k] = "rl:bench:{user-" + k + "}";
		}
		this.policy = RateLimitPolicy.builder("bench")
			.algorithm(Algorithm.TOKEN_BUCKET)
			.capacity(CAPACITY)
			.refill(Refill.of(CAPACITY, Duration.ofSeconds(1)))
			.build();
		this.ours = new InMemoryRateLimitBackend(TimeSource.system(), 100_000);
		// The starter's defaults: 64 keys tracked per sketch, one-minute windows.
		this.heavyHitters = new HeavyHitters(64, Duration.ofMinutes(1).toNanos(), System::nanoTime);

		this.bucket4j = new Bucket[this.keys];
		this.resilience4j = new AtomicRateLimiter[this.keys];
		this.guava = new com.google.common.util.concurrent.RateLimiter[this.keys];
		RateLimiterConfig r4jConfig = RateLimiterConfig.custom()
			.limitForPeriod(Integer.MAX_VALUE)
			.limitRefreshPeriod(Duration.ofSeconds(1))
			.timeoutDuration(Duration.ZERO)
			.build();
		for (int k = 0; k < this.keys; k++) {
			// Bucket.builder() builds a LockFreeBucket (the default synchronization strategy).
			this.bucket4j[k] = Bucket.builder()
				.addLimit(Bandwidth.builder().capacity(CAPACITY).refillGreedy(CAPACITY, Duration.ofSeconds(1)).build())
				.build();
			this.resilience4j[k] = new AtomicRateLimiter("bench-" + k, r4jConfig);
			this.guava[k] = com.google.common.util.concurrent.RateLimiter.create(CAPACITY);
		}
		// Create every key's state up front, so the measurement never times a first call.
		for (int k = 0; k < this.keys; k++) {
			this.ours.tryConsume(this.policy, this.keyNames[k], 1);
		}
		SentinelLimits.logToTemporaryDirectory();
		SentinelLimits.hotParameterRule(this.keyNames, CAPACITY);
	}

	/** Each thread walks the shared index sequence from its own offset. */
	@State(Scope.Thread)
	public static class Cursor {

		private int position;

		@Setup(Level.Trial)
		public void setUp() {
			this.position = (int) (Thread.currentThread().getId() * 7919) & KeyDistribution.MASK;
		}

		int next(int[] indices) {
			int i = indices[this.position];
			this.position = (this.position + 1) & KeyDistribution.MASK;
			return i;
		}

	}

	@Benchmark
	public boolean ours(Cursor cursor) {
		Decision decision = this.ours.tryConsume(this.policy, this.keyNames[cursor.next(this.indices)], 1);
		return decision.allowed();
	}

	/**
	 * Our decision as the starter makes it with heavy hitters on (their
	 * default): the decision, then the sketch of the limit counts it. Run with
	 * {@code -prof gc}: neither allocates.
	 */
	@Benchmark
	public boolean oursWithHeavyHitters(Cursor cursor) {
		String key = this.keyNames[cursor.next(this.indices)];
		Decision decision = this.ours.tryConsume(this.policy, key, 1);
		this.heavyHitters.decided(this.policy, key, 1, decision.allowed(), decision.remaining(), decision.limit(),
				LimitListener.DecisionSource.STORE);
		return decision.allowed();
	}

	/**
	 * The heavy hitters' part of {@link #oursWithHeavyHitters} alone: an
	 * admitted decision counted into the sketch, no decision taken. With two
	 * threads on one key it tells the sketch's own cost from what it changes
	 * in two threads' contention for one key's state.
	 */
	@Benchmark
	public String heavyHittersAlone(Cursor cursor) {
		String key = this.keyNames[cursor.next(this.indices)];
		this.heavyHitters.decided(this.policy, key, 1, true, CAPACITY, CAPACITY, LimitListener.DecisionSource.STORE);
		return key;
	}

	@Benchmark
	public boolean bucket4jLockFree(Cursor cursor) {
		return this.bucket4j[cursor.next(this.indices)].tryConsume(1);
	}

	@Benchmark
	public boolean resilience4jAtomic(Cursor cursor) {
		return this.resilience4j[cursor.next(this.indices)].acquirePermission();
	}

	@Benchmark
	public boolean guava(Cursor cursor) {
		return this.guava[cursor.next(this.indices)].tryAcquire();
	}

	/** Sentinel's limit per key: a hot-parameter rule on one resource, the key its parameter. */
	@Benchmark
	public boolean sentinel(Cursor cursor) {
		return SentinelLimits.passes(SentinelLimits.KEYED, this.keyNames[cursor.next(this.indices)]);
	}

	/**
	 * Sentinel's plain QPS flow rule on one resource: one key only, since a
	 * resource per key would leave all but 6,000 keys unchecked (see
	 * {@link SentinelLimits}). Its own state, so that it runs on {@code keys=1}
	 * alone (and JMH's settings repeated: a nested class does not inherit them).
	 */
	@BenchmarkMode(Mode.AverageTime)
	@OutputTimeUnit(TimeUnit.NANOSECONDS)
	@Warmup(iterations = 3, time = 2)
	@Measurement(iterations = 5, time = 2)
	@Fork(1)
	@State(Scope.Benchmark)
	public static class OneResource {

		private static final String RESOURCE = "bench-resource";

		@Param("1")
		public int keys;

		@Setup(Level.Trial)
		public void setUp() {
			if (this.keys != 1) {
				throw new IllegalArgumentException("sentinelResource is one resource, so keys=1 only; keys=" + this.keys
						+ " would need a resource per key, and Sentinel checks at most 6,000 of them");
			}
			SentinelLimits.logToTemporaryDirectory();
			SentinelLimits.flowRule(RESOURCE, CAPACITY);
		}

		@Benchmark
		public boolean sentinelResource() {
			return SentinelLimits.passes(RESOURCE);
		}

	}

}
