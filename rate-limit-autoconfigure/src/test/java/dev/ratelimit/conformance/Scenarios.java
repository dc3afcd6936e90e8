package dev.ratelimit.conformance;

import java.util.List;
import java.util.stream.Stream;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.RateLimitPolicy;

/**
 * The conformance table: timelines of (time, cost) with the decision every
 * backend must give, for every algorithm. The same table runs unchanged
 * against the in-memory backend and the Redis script.
 * <p>
 * Times are milliseconds after a start that is aligned to a whole second, so
 * that fixed windows begin at {@code 0}.
 */
final class Scenarios {

	private Scenarios() {
	}

	/**
	 * One call of a timeline: its time and cost, and the decision expected.
	 *
	 * @param atMillis time since the start
	 * @param cost the cost
	 * @param expected the decision, with times in microseconds
	 */
	record Step(long atMillis, long cost, Decision expected) {

		@Override
		public String toString() {
			return "t=" + this.atMillis + "ms cost=" + this.cost;
		}

	}

	/**
	 * A named timeline on one policy and one key.
	 *
	 * @param name what the scenario shows
	 * @param policy the policy
	 * @param steps the calls in time order
	 */
	record Scenario(String name, RateLimitPolicy policy, List<Step> steps) {

		@Override
		public String toString() {
			return this.name;
		}

	}

	static Stream<Scenario> all() {
		return Stream.of(tokenBucketReferenceTimeline(), tokenBucketCosts(), tokenBucketHasNoBoundaryBurst(),
				fixedWindowSevenImmediateCalls(), fixedWindowBoundaryBurst(), fixedWindowCosts(),
				slidingLogHasNoBoundaryBurst(), slidingLogCosts(), slidingCounterBlendsTwoWindows(),
				leakyBucketPolicesLikeTheReferenceTimeline(), shapingQueuesCallersInTurn(), tokenBucketWaitMode(),
				leakyBucketWaitMode());
	}

	static Scenario tokenBucketReferenceTimeline() {
		RateLimitPolicy policy = RateLimitPolicy.builder("tb-reference").capacity(2).refill("2/1s").build();
		return new Scenario("token bucket 2/s capacity 2: allow, allow, allow at 0.5 s, reject at 0.75 s", policy,
				List.of(allow(0, 1, 1, 2, 500), allow(0, 1, 0, 2, 1000), allow(500, 1, 0, 2, 1000),
						deny(750, 1, 0, 2, 750, 250)));
	}

	static Scenario tokenBucketCosts() {
		RateLimitPolicy policy = RateLimitPolicy.builder("tb-costs").capacity(10).refill("1/1s").build();
		return new Scenario("token bucket costs: 7 taken, 5 waits for 2 tokens, 0 only looks", policy,
				List.of(allow(0, 7, 3, 10, 7000), deny(0, 5, 3, 10, 7000, 2000), allow(0, 0, 3, 10, 7000),
						allow(2000, 5, 0, 10, 10000)));
	}

	static Scenario tokenBucketHasNoBoundaryBurst() {
		RateLimitPolicy policy = RateLimitPolicy.builder("tb-boundary").capacity(5).refill("5/1s").build();
		return new Scenario("token bucket 5/s: 5 at 0.999 s, then nothing extra at 1.000 s", policy,
				List.of(allow(999, 1, 4, 5, 200), allow(999, 1, 3, 5, 400), allow(999, 1, 2, 5, 600),
						allow(999, 1, 1, 5, 800), allow(999, 1, 0, 5, 1000), deny(1000, 1, 0, 5, 999, 199),
						deny(1000, 1, 0, 5, 999, 199), allow(1199, 1, 0, 5, 1000)));
	}

	static Scenario fixedWindowSevenImmediateCalls() {
		RateLimitPolicy policy = window("fw-seven", Algorithm.FIXED_WINDOW, 5, "1s");
		return new Scenario("fixed window 5/s: 7 immediate calls answer allow x5, deny, deny", policy,
				List.of(allow(0, 1, 4, 5, 1000), allow(0, 1, 3, 5, 1000), allow(0, 1, 2, 5, 1000),
						allow(0, 1, 1, 5, 1000), allow(0, 1, 0, 5, 1000), deny(0, 1, 0, 5, 1000, 1000),
						deny(0, 1, 0, 5, 1000, 1000)));
	}

	static Scenario fixedWindowBoundaryBurst() {
		RateLimitPolicy policy = window("fw-boundary", Algorithm.FIXED_WINDOW, 5, "1s");
		// 0.95 s rather than 0.999 s: Redis expires the first window's key on its own clock,
		// and a 1 ms TTL could fire in real time before the next simulated step.
		return new Scenario("fixed window 5/s: 10 admitted within 50 ms across the boundary", policy,
				List.of(allow(950, 1, 4, 5, 50), allow(950, 1, 3, 5, 50), allow(950, 1, 2, 5, 50),
						allow(950, 1, 1, 5, 50), allow(950, 1, 0, 5, 50), deny(999, 1, 0, 5, 1, 1),
						allow(1000, 1, 4, 5, 1000), allow(1000, 1, 3, 5, 1000), allow(1000, 1, 2, 5, 1000),
						allow(1000, 1, 1, 5, 1000), allow(1000, 1, 0, 5, 1000), deny(1001, 1, 0, 5, 999, 999)));
	}

	static Scenario fixedWindowCosts() {
		RateLimitPolicy policy = window("fw-costs", Algorithm.FIXED_WINDOW, 10, "1m");
		return new Scenario("fixed window costs: 4 + 4 taken, 3 more waits for the next window", policy,
				List.of(allow(0, 4, 6, 10, 60_000), allow(1000, 4, 2, 10, 59_000),
						deny(2000, 3, 2, 10, 58_000, 58_000), allow(60_000, 3, 7, 10, 60_000)));
	}

	static Scenario slidingLogHasNoBoundaryBurst() {
		RateLimitPolicy policy = window("log-boundary", Algorithm.SLIDING_WINDOW_LOG, 5, "1s");
		return new Scenario("sliding log 5/s: 5 at 0.999 s, nothing more until 1.999 s", policy,
				List.of(allow(999, 1, 4, 5, 1000), allow(999, 1, 3, 5, 1000), allow(999, 1, 2, 5, 1000),
						allow(999, 1, 1, 5, 1000), allow(999, 1, 0, 5, 1000), deny(1000, 1, 0, 5, 999, 999),
						deny(1998, 1, 0, 5, 1, 1), allow(1999, 1, 4, 5, 1000)));
	}

	static Scenario slidingLogCosts() {
		RateLimitPolicy policy = window("log-costs", Algorithm.SLIDING_WINDOW_LOG, 10, "1s");
		return new Scenario("sliding log costs: the oldest entry that frees enough sets retry-after", policy,
				List.of(allow(0, 4, 6, 10, 1000), allow(300, 4, 2, 10, 1000), deny(600, 4, 2, 10, 700, 400),
						allow(1000, 4, 2, 10, 1000), allow(1000, 0, 2, 10, 1000)));
	}

	static Scenario slidingCounterBlendsTwoWindows() {
		RateLimitPolicy policy = window("swc-blend", Algorithm.SLIDING_WINDOW_COUNTER, 10, "1s");
		return new Scenario("sliding counter 10/s: half of the previous window still counts at mid-window",
				policy,
				List.of(allow(0, 10, 0, 10, 2000), deny(0, 1, 0, 10, 2000, 1100), allow(1500, 1, 4, 10, 1500),
						allow(1500, 4, 0, 10, 1500), deny(1500, 1, 0, 10, 1500, 100), allow(1600, 1, 0, 10, 1400),
						allow(2999, 9, 0, 10, 1001), deny(2999, 1, 0, 10, 1001, 1)));
	}

	static Scenario leakyBucketPolicesLikeTheReferenceTimeline() {
		RateLimitPolicy policy = RateLimitPolicy.builder("lb-reference").algorithm(Algorithm.LEAKY_BUCKET)
			.capacity(2)
			.refill("2/1s")
			.build();
		return new Scenario("leaky bucket (policing) 2/s size 2: rejects at 0.75 s when it would overflow", policy,
				List.of(allow(0, 1, 1, 2, 500), allow(0, 1, 0, 2, 1000), allow(500, 1, 0, 2, 1000),
						deny(750, 1, 0, 2, 750, 250)));
	}

	static Scenario shapingQueuesCallersInTurn() {
		RateLimitPolicy policy = RateLimitPolicy.builder("lbs-turns").algorithm(Algorithm.LEAKY_BUCKET_SHAPING)
			.capacity(3)
			.refill("10/1s")
			.build();
		return new Scenario("shaping leaky bucket 10/s queue 3: turns 100 ms apart, the fourth is rejected", policy,
				List.of(shaped(0, 1, 2, 3, 100, 0), shaped(0, 1, 1, 3, 200, 100), shaped(0, 1, 0, 3, 300, 200),
						deny(0, 1, 0, 3, 300, 100), shaped(150, 1, 0, 3, 250, 150), shaped(1000, 2, 1, 3, 200, 0)));
	}

	static Scenario tokenBucketWaitMode() {
		RateLimitPolicy policy = RateLimitPolicy.builder("tb-wait").capacity(2).refill("2/1s")
			.maxWaitMicros(1_000_000)
			.build();
		return new Scenario("token bucket 2/s with max-wait 1 s: callers over the limit wait their turn", policy,
				List.of(allow(0, 1, 1, 2, 500), allow(0, 1, 0, 2, 1000), shaped(0, 1, 0, 2, 1500, 500),
						shaped(0, 1, 0, 2, 2000, 1000), deny(0, 1, 0, 2, 2000, 500), shaped(500, 1, 0, 2, 2000, 1000),
						allow(3000, 2, 0, 2, 1000)));
	}

	static Scenario leakyBucketWaitMode() {
		RateLimitPolicy policy = RateLimitPolicy.builder("lb-wait").algorithm(Algorithm.LEAKY_BUCKET).capacity(2)
			.refill("2/1s")
			.maxWaitMicros(1_000_000)
			.build();
		return new Scenario("leaky bucket 2/s with max-wait 1 s: the bucket overflows by what drains in time", policy,
				List.of(allow(0, 1, 1, 2, 500), allow(0, 1, 0, 2, 1000), shaped(0, 1, 0, 2, 1500, 500),
						shaped(0, 1, 0, 2, 2000, 1000), deny(0, 1, 0, 2, 2000, 500), shaped(500, 1, 0, 2, 2000, 1000),
						allow(3000, 2, 0, 2, 1000)));
	}

	private static RateLimitPolicy window(String name, Algorithm algorithm, long capacity, String window) {
		return RateLimitPolicy.builder(name).algorithm(algorithm).capacity(capacity).window(window).build();
	}

	static Step allow(long at, long cost, long remaining, long limit, long resetMillis) {
		return new Step(at, cost, new Decision(true, remaining, limit, resetMillis * 1000, 0, 0));
	}

	static Step shaped(long at, long cost, long remaining, long limit, long resetMillis, long delayMillis) {
		return new Step(at, cost, new Decision(true, remaining, limit, resetMillis * 1000, 0, delayMillis * 1000));
	}

	static Step deny(long at, long cost, long remaining, long limit, long resetMillis, long retryMillis) {
		return new Step(at, cost, new Decision(false, remaining, limit, resetMillis * 1000, retryMillis * 1000, 0));
	}

}
