package dev.ratelimit.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.ratelimit.memory.InMemoryRateLimitBackend;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

class TokenBucketTests {

	private final ManualTimeSource clock = new ManualTimeSource();

	private final InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(this.clock, 1_000);

	@Test
	void rateTwoPerSecondCapacityTwoFollowsTheReferenceTimeline() {
		RateLimitPolicy policy = RateLimitPolicy.builder("p").capacity(2).refill("2/1s").build();
		// t = 0.00: the bucket starts full, two requests pass
		assertThat(consume(policy)).isEqualTo(new Decision(true, 1, 2, 500_000, 0));
		assertThat(consume(policy)).isEqualTo(new Decision(true, 0, 2, 1_000_000, 0));
		// t = 0.50: one token refilled
		this.clock.advance(Duration.ofMillis(500));
		assertThat(consume(policy)).isEqualTo(new Decision(true, 0, 2, 1_000_000, 0));
		// t = 0.75: half a token, rejected; the missing half takes 250 ms
		this.clock.advance(Duration.ofMillis(250));
		assertThat(consume(policy)).isEqualTo(new Decision(false, 0, 2, 750_000, 250_000));
	}

	@Test
	void idleBucketRefillsOnlyUpToCapacity() {
		RateLimitPolicy policy = RateLimitPolicy.builder("p").capacity(5).refill("1/1s").build();
		for (int i = 0; i < 5; i++) {
			assertThat(consume(policy).allowed()).isTrue();
		}
		this.clock.advance(Duration.ofHours(3));
		for (int i = 0; i < 5; i++) {
			assertThat(consume(policy).allowed()).isTrue();
		}
		assertThat(consume(policy).allowed()).isFalse();
	}

	@Test
	void costTakesSeveralTokensAndRetryAfterCoversTheMissingOnes() {
		RateLimitPolicy policy = RateLimitPolicy.builder("p").capacity(10).refill("1/1s").build();
		assertThat(consume(policy, 7)).isEqualTo(new Decision(true, 3, 10, 7_000_000, 0));
		assertThat(consume(policy, 5)).isEqualTo(new Decision(false, 3, 10, 7_000_000, 2_000_000));
		assertThat(consume(policy, 0)).isEqualTo(new Decision(true, 3, 10, 7_000_000, 0));
	}

	@Test
	void nonIntegralIntervalsDoNotDriftOverManyRefills() {
		// 3 per second: 333,333.33 us per token, kept exact by scaled integers
		RateLimitPolicy policy = RateLimitPolicy.builder("p").capacity(1).refill("3/1s").build();
		int allowed = 0;
		for (int step = 0; step < 3_000; step++) {
			if (consume(policy).allowed()) {
				allowed++;
			}
			this.clock.advanceMicros(1_000);
		}
		// 3 seconds at 3/s after a full bucket of 1: exactly 1 + 9 - the last partial token
		assertThat(allowed).isEqualTo(9);
	}

	@Test
	void clockGoingBackwardsRefillsNothing() {
		RateLimitPolicy policy = RateLimitPolicy.builder("p").capacity(1).refill("1/1s").build();
		assertThat(consume(policy).allowed()).isTrue();
		this.clock.advanceMicros(-5_000_000);
		assertThat(consume(policy).allowed()).isFalse();
	}

	private Decision consume(RateLimitPolicy policy) {
		return consume(policy, 1);
	}

	private Decision consume(RateLimitPolicy policy, long cost) {
		return this.backend.tryConsume(policy, "rl:p:{k}", cost);
	}

}
