package dev.ratelimit.resilience;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Acquisition;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.memory.InMemoryRateLimitBackend;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The local deny cache: exact, and no backend call for a key denied until a
 * time that has not come.
 */
class DenyCachingBackendTests {

	private final ManualTimeSource clock = new ManualTimeSource();

	private final AtomicInteger calls = new AtomicInteger();

	private final RateLimitBackend remote = counting(new InMemoryRateLimitBackend(this.clock, 100));

	private final DenyCachingBackend backend = new DenyCachingBackend(this.remote, this.clock, 100);

	private final RateLimitPolicy policy = RateLimitPolicy.builder("p").capacity(2).refill("2/1s").build();

	@Test
	void deniedKeyIsAnsweredLocallyUntilItsRetryAfter() {
		consume(1);
		consume(1);
		Decision denied = consume(1);
		assertThat(denied.allowed()).isFalse();
		assertThat(this.calls).hasValue(3);
		this.clock.advance(Duration.ofMillis(200));
		Decision cached = consume(1);
		assertThat(cached).isEqualTo(new Decision(false, 0, 2, 800_000, 300_000));
		assertThat(this.calls).hasValue(3);
		this.clock.advance(Duration.ofMillis(300));
		assertThat(consume(1).allowed()).isTrue();
		assertThat(this.calls).hasValue(4);
	}

	@Test
	void cachedAnswersEqualTheBackendsAtEveryStep() {
		DenyCachingBackend cached = this.backend;
		RateLimitBackend plain = new InMemoryRateLimitBackend(this.clock, 100);
		java.util.Random random = new java.util.Random(7);
		for (int step = 0; step < 2_000; step++) {
			long cost = 1 + random.nextInt(2);
			boolean viaCache = cached.tryConsume(this.policy, "rl:p:{k}", cost).allowed();
			boolean direct = plain.tryConsume(this.policy, "rl:p:{k}", cost).allowed();
			assertThat(viaCache).as("step %d", step).isEqualTo(direct);
			this.clock.advanceMicros(random.nextInt(200_000));
		}
		assertThat(this.calls.get()).isLessThan(2_000);
	}

	@Test
	void smallerCostStillAsksTheBackend() {
		RateLimitPolicy big = RateLimitPolicy.builder("big").capacity(10).refill("1/1s").build();
		this.backend.tryConsume(big, "rl:big:{k}", 9);
		assertThat(this.backend.tryConsume(big, "rl:big:{k}", 5).allowed()).isFalse();
		assertThat(this.backend.tryConsume(big, "rl:big:{k}", 1).allowed()).isTrue();
		assertThat(this.calls).hasValue(3);
	}

	@Test
	void layeredCallsAlwaysAskTheBackendAndResetClearsTheCache() {
		consume(2);
		assertThat(consume(1).allowed()).isFalse();
		RateLimitPolicy other = RateLimitPolicy.builder("o").capacity(5).refill("5/1s").build();
		List<Decision> layered = this.backend.tryConsumeAll(List.of(new Acquisition(this.policy, "rl:p:{k}", 1),
				new Acquisition(other, "rl:o:{k}", 1)));
		assertThat(layered).hasSize(2);
		assertThat(this.calls).hasValue(3);
		this.backend.reset(this.policy, "rl:p:{k}");
		assertThat(this.backend.size()).isZero();
	}

	private Decision consume(long cost) {
		return this.backend.tryConsume(this.policy, "rl:p:{k}", cost);
	}

	private RateLimitBackend counting(InMemoryRateLimitBackend delegate) {
		return new RateLimitBackend() {

			@Override
			public List<Decision> tryConsumeAll(List<Acquisition> acquisitions) {
				DenyCachingBackendTests.this.calls.incrementAndGet();
				return delegate.tryConsumeAll(acquisitions);
			}

			@Override
			public void reset(RateLimitPolicy policy, String key) {
				delegate.reset(policy, key);
			}

		};
	}

}
