package dev.ratelimit.benchmarks;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

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
import org.openjdk.jmh.infra.BenchmarkParams;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Refill;
import dev.ratelimit.core.TimeSource;
import dev.ratelimit.memory.InMemoryRateLimitBackend;

/**
 * Nanoseconds and bytes per in-memory decision, with the keyed state in the
 * hand-written map of {@link InMemoryRateLimitBackend} or in a Caffeine cache
 * ({@link CaffeineRateLimitBackend}): the same token bucket, the same decision,
 * the same key bound and idle expiry; only the map differs. Set up as
 * {@link InMemoryDecisionBenchmark}: a bucket so large it never denies, keys
 * shaped like real ones ({@code rl:bench:{user-42}}), {@code keys=1} one hot
 * key, {@code keys=10000} a Zipf (s = 1) spread over 10,000 keys, every key
 * created before the measurement. Run with {@code -t 1} and {@code -t 2}, and
 * {@code -prof gc} for the bytes.
 * <ul>
 * <li>{@code handWritten}: {@link InMemoryRateLimitBackend#tryConsume}.</li>
 * <li>{@code caffeine}: every decision in {@code asMap().compute}, as
 * {@link dev.ratelimit.budget.InMemoryBudgetStore} does.</li>
 * <li>{@code caffeineReadThenLock}: {@code getIfPresent}, then the entry's own
 * lock (the hand-written backend's); {@code compute} only to create a key (see
 * {@link CaffeineRateLimitBackend.HitPath#READ_THEN_LOCK}).</li>
 * <li>{@code clockRead}: one reading of {@link TimeSource#system()}, for scale
 * (the {@code keys} parameter does not apply to it).</li>
 * </ul>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class KeyedStateBenchmark {

	/** Effectively unlimited: 10^9 tokens, refilled at 10^9 per second. */
	private static final long CAPACITY = 1_000_000_000L;

	@Param({ "1", "10000" })
	public int keys;

	private int[] indices;

	private String[] keyNames;

	private RateLimitPolicy policy;

	private InMemoryRateLimitBackend handWritten;

	private CaffeineRateLimitBackend caffeine;

	private CaffeineRateLimitBackend caffeineReadThenLock;

	@Setup(Level.Trial)
	public void setUp(BenchmarkParams params) {
		this.indices = (this.keys == 1) ? new int[KeyDistribution.LENGTH]
				: KeyDistribution.zipf(this.keys, 1.0, 42L);
		this.keyNames = new String[this.keys];
		for (int k = 0; k < this.keys; k++) {
			this.keyNames[k] = "rl:bench:{user-" + k + "}";
		}
		this.policy = RateLimitPolicy.builder("bench")
			.algorithm(Algorithm.TOKEN_BUCKET)
			.capacity(CAPACITY)
			.refill(Refill.of(CAPACITY, Duration.ofSeconds(1)))
			.build();
		this.handWritten = new InMemoryRateLimitBackend(TimeSource.system(), 100_000);
		this.caffeine = new CaffeineRateLimitBackend(TimeSource.system(), 100_000,
				CaffeineRateLimitBackend.HitPath.COMPUTE);
		this.caffeineReadThenLock = new CaffeineRateLimitBackend(TimeSource.system(), 100_000,
				CaffeineRateLimitBackend.HitPath.READ_THEN_LOCK);
		// Create every key's state up front, so the measurement never times a first call; only in
		// the backend measured (each benchmark runs in its own JVM), so that the two Caffeine
		// variants, one class, do not share the JIT's profile of it.
		String benchmark = params.getBenchmark();
		for (int k = 0; k < this.keys; k++) {
			if (benchmark.endsWith(".handWritten")) {
				this.handWritten.tryConsume(this.policy, this.keyNames[k], 1);
			}
			else if (benchmark.endsWith(".caffeine")) {
				this.caffeine.tryConsume(this.policy, this.keyNames[k], 1);
			}
			else if (benchmark.endsWith(".caffeineReadThenLock")) {
				this.caffeineReadThenLock.tryConsume(this.policy, this.keyNames[k], 1);
			}
		}
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

	/**
	 * One reading of the clock both backends use, for scale: the hand-written
	 * backend reads it once per decision; Caffeine's ticker reads it again, once
	 * per {@code getIfPresent} and three times per {@code compute} (Caffeine
	 * 3.2's {@code BoundedLocalCache#compute} and {@code remap}).
	 */
	@Benchmark
	public long clockRead() {
		return TimeSource.system().currentTimeMicros();
	}

	@Benchmark
	public boolean handWritten(Cursor cursor) {
		Decision decision = this.handWritten.tryConsume(this.policy, this.keyNames[cursor.next(this.indices)], 1);
		return decision.allowed();
	}

	@Benchmark
	public boolean caffeine(Cursor cursor) {
		Decision decision = this.caffeine.tryConsume(this.policy, this.keyNames[cursor.next(this.indices)], 1);
		return decision.allowed();
	}

	@Benchmark
	public boolean caffeineReadThenLock(Cursor cursor) {
		Decision decision = this.caffeineReadThenLock.tryConsume(this.policy,
				this.keyNames[cursor.next(this.indices)], 1);
		return decision.allowed();
	}

}
