package dev.ratelimit.prefetch;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Acquisition;
import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.memory.InMemoryRateLimitBackend;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Prefetch mode over a shared backend (an in-memory backend standing in for
 * Redis, shared by several prefetching "instances"): one backend call per
 * prefetch, the
 * documented over-admission bound for the token bucket, none for the fixed
 * window, and nothing lost by a single instance.
 */
class PrefetchingBackendTests {

	private static final String KEY = "rl:p:{k}";

	private final ManualTimeSource clock = new ManualTimeSource();

	private final AtomicInteger calls = new AtomicInteger();

	private final RateLimitBackend shared = counting(new InMemoryRateLimitBackend(this.clock, 100));

	private final RateLimitPolicy bucket = RateLimitPolicy.builder("p")
		.capacity(100)
		.refill("100/1s")
		.prefetch(10)
		.build();

	private final RateLimitPolicy window = RateLimitPolicy.builder("w")
		.algorithm(Algorithm.FIXED_WINDOW)
		.capacity(100)
		.window("1s")
		.prefetch(10)
		.build();

	@Test
	void takesOneBackendCallPerPrefetchOfCalls() {
		PrefetchingBackend instance = instance();
		for (int i = 0; i < 50; i++) {
			assertThat(instance.tryConsume(this.bucket, KEY, 1).allowed()).isTrue();
		}
		assertThat(this.calls).hasValue(5);
		assertThat(instance.held(KEY)).isZero();
		assertThat(peek(this.bucket).remaining()).isEqualTo(50);
	}

	@Test
	void reportsTheSharedRemainderPlusTheTokensInHand() {
		PrefetchingBackend instance = instance();
		Decision first = instance.tryConsume(this.bucket, KEY, 1);
		assertThat(first).isEqualTo(new Decision(true, 99, 100, 100_000, 0));
		assertThat(instance.held(KEY)).isEqualTo(9);
		Decision second = instance.tryConsume(this.bucket, KEY, 3);
		assertThat(second.remaining()).isEqualTo(96);
		assertThat(instance.held(KEY)).isEqualTo(6);
	}

	@Test
	void aSingleInstanceAdmitsExactlyTheCapacity() {
		// Near the limit the instance asks for each call's own cost, so no token is stranded.
		RateLimitPolicy policy = RateLimitPolicy.builder("p").capacity(25).refill("1/1h").prefetch(10).build();
		PrefetchingBackend instance = instance();
		int admitted = 0;
		for (int i = 0; i < 40; i++) {
			admitted += instance.tryConsume(policy, KEY, 1).allowed() ? 1 : 0;
		}
		assertThat(admitted).isEqualTo(25);
	}

	@Test
	void tokenBucketNeverAdmitsMoreThanPrefetchTimesInstancesAboveTheBucket() {
		int instances = 4;
		List<PrefetchingBackend> fleet = fleet(instances);
		Random random = new Random(11);
		List<Long> admittedAt = new ArrayList<>();
		long start = this.clock.currentTimeMicros();
		for (int step = 0; step < 20_000; step++) {
			PrefetchingBackend instance = fleet.get(random.nextInt(instances));
			if (instance.tryConsume(this.bucket, KEY, 1).allowed()) {
				admittedAt.add(this.clock.currentTimeMicros());
			}
			this.clock.advanceMicros(random.nextInt(400));
		}
		// Over any interval the bucket gives at most capacity + rate × length; prefetching adds prefetch × instances.
		long bound = this.bucket.capacity() + this.bucket.prefetch() * instances;
		long worst = 0;
		for (int from = 0; from < admittedAt.size(); from += 97) {
			for (int to = from; to < admittedAt.size(); to += 13) {
				long lengthMicros = admittedAt.get(to) - admittedAt.get(from);
				long refilled = lengthMicros * this.bucket.refill().tokens() / this.bucket.refill().periodMicros();
				long excess = (to - from + 1) - refilled;
				worst = Math.max(worst, excess);
			}
		}
		assertThat(worst).isGreaterThanOrEqualTo(this.bucket.capacity()).isLessThanOrEqualTo(bound);
		// Offered far above the rate, they lose at most the tokens in hand at the end.
		long refilled = (this.clock.currentTimeMicros() - start) / 10_000;
		assertThat((long) admittedAt.size())
			.isGreaterThanOrEqualTo(this.bucket.capacity() + refilled - this.bucket.prefetch() * instances);
	}

	@Test
	void tokensInHandAreWhatAFullBucketCanBeExceededBy() {
		List<PrefetchingBackend> fleet = fleet(4);
		fleet.forEach((instance) -> instance.tryConsume(this.bucket, KEY, 1));
		this.clock.advance(Duration.ofSeconds(1));
		int admitted = 0;
		for (PrefetchingBackend instance : fleet) {
			while (instance.tryConsume(this.bucket, KEY, 1).allowed()) {
				admitted++;
			}
		}
		// At one instant: the full bucket plus the 9 tokens each instance still held.
		assertThat(admitted).isEqualTo(100 + 4 * 9);
		assertThat(admitted).isLessThanOrEqualTo((int) (this.bucket.capacity() + 4 * this.bucket.prefetch()));
	}

	@Test
	void fixedWindowNeverAdmitsMoreThanItsLimit() {
		List<PrefetchingBackend> fleet = fleet(4);
		Random random = new Random(5);
		long[] perWindow = new long[40];
		long start = this.clock.currentTimeMicros();
		while (this.clock.currentTimeMicros() - start < 40_000_000L) {
			PrefetchingBackend instance = fleet.get(random.nextInt(fleet.size()));
			long now = this.clock.currentTimeMicros();
			int cost = 1 + random.nextInt(3);
			if (instance.tryConsume(this.window, KEY, cost).allowed()) {
				perWindow[(int) ((now - start) / 1_000_000L)] += cost;
			}
			this.clock.advanceMicros(random.nextInt(5_000));
		}
		assertThat(java.util.Arrays.stream(perWindow).max().getAsLong()).isLessThanOrEqualTo(100);
		assertThat(java.util.Arrays.stream(perWindow).min().getAsLong()).isGreaterThanOrEqualTo(50);
	}

	@Test
	void fixedWindowPrefetchExpiresWithItsWindow() {
		PrefetchingBackend instance = instance();
		this.clock.advance(Duration.ofMillis(900));
		instance.tryConsume(this.window, KEY, 1);
		assertThat(instance.held(KEY)).isEqualTo(9);
		this.clock.advance(Duration.ofMillis(100));
		assertThat(instance.held(KEY)).isZero();
		Decision next = instance.tryConsume(this.window, KEY, 1);
		assertThat(next.remaining()).isEqualTo(99);
		assertThat(this.calls).hasValue(2);
	}

	@Test
	void costAboveThePrefetchLayeredCallsAndPoliciesWithoutPrefetchGoStraightThrough() {
		PrefetchingBackend instance = instance();
		instance.tryConsume(this.bucket, KEY, 11);
		assertThat(instance.held(KEY)).isZero();
		RateLimitPolicy plain = RateLimitPolicy.builder("q").capacity(100).refill("100/1s").build();
		instance.tryConsume(plain, "rl:q:{k}", 1);
		instance.tryConsumeAll(List.of(new Acquisition(this.bucket, KEY, 1), new Acquisition(plain, "rl:q:{k}", 1)));
		assertThat(instance.held(KEY)).isZero();
		assertThat(this.calls).hasValue(3);
		assertThat(peek(this.bucket).remaining()).isEqualTo(88);
	}

	@Test
	void deniedWhenTheSharedBucketIsEmptyAndResetDropsTheTokensInHand() {
		PrefetchingBackend first = instance();
		PrefetchingBackend second = instance();
		first.tryConsume(this.bucket, KEY, 1);
		for (int i = 0; i < 90; i++) {
			second.tryConsume(this.bucket, KEY, 1);
		}
		Decision denied = second.tryConsume(this.bucket, KEY, 1);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.retryAfterMicros()).isEqualTo(10_000);
		assertThat(first.held(KEY)).isEqualTo(9);
		assertThat(first.tryConsume(this.bucket, KEY, 1).allowed()).isTrue();
		first.reset(this.bucket, KEY);
		assertThat(first.held(KEY)).isZero();
		assertThat(peek(this.bucket).remaining()).isEqualTo(100);
	}

	private PrefetchingBackend instance() {
		return new PrefetchingBackend(this.shared, this.clock, 100);
	}

	private List<PrefetchingBackend> fleet(int size) {
		List<PrefetchingBackend> fleet = new ArrayList<>();
		for (int i = 0; i < size; i++) {
			fleet.add(instance());
		}
		return fleet;
	}

	private Decision peek(RateLimitPolicy policy) {
		return this.shared.tryConsume(policy, KEY, 0);
	}

	private RateLimitBackend counting(RateLimitBackend backend) {
		return new RateLimitBackend() {

			@Override
			public List<Decision> tryConsumeAll(List<Acquisition> acquisitions) {
				if (acquisitions.get(0).cost() > 0) {
					PrefetchingBackendTests.this.calls.incrementAndGet();
				}
				return backend.tryConsumeAll(acquisitions);
			}

			@Override
			public void reset(RateLimitPolicy policy, String key) {
				backend.reset(policy, key);
			}

		};
	}

}
