package dev.ratelimit.core;

import java.util.List;

import org.junit.jupiter.api.Test;

import dev.ratelimit.memory.InMemoryRateLimitBackend;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class RateLimiterTests {

	private final LimitKeys keys = new LimitKeys("rl", 128);

	private final RateLimiter limiter = new RateLimiter(new InMemoryRateLimitBackend(new ManualTimeSource(), 100),
			this.keys);

	private final RateLimitPolicy.Builder onePerHour = RateLimitPolicy.builder("p").capacity(1).refill("1/1h");

	@Test
	void missingKeyWithSharedCountsAllKeylessCallersTogether() {
		RateLimitPolicy policy = this.onePerHour.missingKey(MissingKeyAction.SHARED).build();
		assertThat(acquire(policy, null).allowed()).isTrue();
		assertThat(acquire(policy, null).allowed()).isFalse();
		assertThat(acquire(policy, "someone").allowed()).isTrue();
	}

	@Test
	void missingKeyWithAllowSkipsThePolicy() {
		RateLimitPolicy policy = this.onePerHour.missingKey(MissingKeyAction.ALLOW).build();
		assertThat(acquire(policy, null).decisions()).isEmpty();
		assertThat(acquire(policy, null).allowed()).isTrue();
	}

	@Test
	void missingKeyWithRejectThrowsNamingThePolicy() {
		RateLimitPolicy policy = this.onePerHour.missingKey(MissingKeyAction.REJECT).key("header('X-User')").build();
		assertThatExceptionOfType(RateLimitKeyMissingException.class).isThrownBy(() -> acquire(policy, null))
			.withMessageContaining("'p'")
			.withMessageContaining("header('X-User')");
	}

	@Test
	void negativeCostAndCostAboveCapacityAreRejectedWithAMessage() {
		RateLimitPolicy policy = this.onePerHour.build();
		assertThatExceptionOfType(InvalidCostException.class)
			.isThrownBy(() -> this.limiter.acquire(List.of(new LimitRequest(policy, "k", -1))))
			.withMessageContaining("negative");
		assertThatExceptionOfType(InvalidCostException.class)
			.isThrownBy(() -> this.limiter.acquire(List.of(new LimitRequest(policy, "k", 2))))
			.withMessageContaining("can never succeed");
	}

	@Test
	void layeredPoliciesAreAllOrNothingAndAllReported() {
		RateLimitPolicy loose = RateLimitPolicy.builder("loose").capacity(10).refill("1/1h").build();
		RateLimitPolicy tight = RateLimitPolicy.builder("tight").capacity(1).refill("1/1h").build();
		List<LimitRequest> call = List.of(new LimitRequest(loose, "k", 1), new LimitRequest(tight, "k", 1));
		assertThat(this.limiter.acquire(call).allowed()).isTrue();
		RateLimitOutcome denied = this.limiter.acquire(call);
		assertThat(denied.allowed()).isFalse();
		assertThat(denied.violatedPolicies()).containsExactly("tight");
		assertThat(denied.retryAfterMicros()).isEqualTo(3_600_000_000L);
		// loose is reported, allowed, and was not charged for the refused call
		assertThat(denied.decisions()).hasSize(2);
		assertThat(denied.decisions().get(0).decision().allowed()).isTrue();
		assertThat(denied.decisions().get(0).decision().remaining()).isEqualTo(9);
		assertThat(acquire(loose, "k").decisions().get(0).decision().remaining()).isEqualTo(8);
	}

	@Test
	void retryAfterIsTheLongestWaitAmongViolatedPolicies() {
		RateLimitPolicy minute = RateLimitPolicy.builder("minute").capacity(1).refill("1/1m").build();
		RateLimitPolicy hour = RateLimitPolicy.builder("hour").capacity(1).refill("1/1h").build();
		List<LimitRequest> call = List.of(new LimitRequest(minute, "k", 1), new LimitRequest(hour, "k", 1));
		this.limiter.acquire(call);
		RateLimitOutcome denied = this.limiter.acquire(call);
		assertThat(denied.violatedPolicies()).containsExactly("minute", "hour");
		assertThat(denied.retryAfterMicros()).isEqualTo(3_600_000_000L);
	}

	@Test
	void shapingPolicyMakesTheCallerWaitForItsTurn() {
		ManualTimeSource clock = new ManualTimeSource();
		List<Long> waits = new java.util.ArrayList<>();
		RateLimiter shaping = new RateLimiter(new InMemoryRateLimitBackend(clock, 100), this.keys, (micros) -> {
			waits.add(micros);
			clock.advanceMicros(micros);
		});
		RateLimitPolicy smooth = RateLimitPolicy.builder("smooth").algorithm(Algorithm.LEAKY_BUCKET_SHAPING)
			.capacity(3).refill("10/1s").build();
		for (int i = 0; i < 3; i++) {
			assertThat(shaping.acquire(List.of(new LimitRequest(smooth, "k", 1))).allowed()).isTrue();
		}
		assertThat(waits).containsExactly(100_000L, 100_000L);
		// Without waiting, the queue of 3 fills: turns at 0, 100 and 200 ms, then a refusal
		for (long turn : new long[] { 0, 100_000, 200_000 }) {
			assertThat(shaping.tryAcquire(List.of(new LimitRequest(smooth, "fresh", 1))).delayMicros()).isEqualTo(turn);
		}
		RateLimitOutcome refused = shaping.tryAcquire(List.of(new LimitRequest(smooth, "fresh", 1)));
		assertThat(refused.allowed()).isFalse();
		assertThat(refused.retryAfterMicros()).isEqualTo(100_000L);
	}

	@Test
	void failedBackendAllowsOpenPoliciesAndRejectsClosedOnes() {
		RateLimitBackend broken = (acquisitions) -> {
			throw new IllegalStateException("connection refused");
		};
		RateLimiter failing = new RateLimiter(broken, this.keys);
		RateLimitPolicy open = this.onePerHour.failureMode(FailureMode.OPEN).build();
		RateLimitPolicy closed = RateLimitPolicy.builder("money").capacity(1).refill("1/1h")
			.failureMode(FailureMode.CLOSED).build();
		assertThat(failing.acquire(List.of(new LimitRequest(open, "k", 1))).allowed()).isTrue();
		assertThatExceptionOfType(RateLimitBackendUnavailableException.class)
			.isThrownBy(() -> failing.acquire(List.of(new LimitRequest(closed, "k", 1))))
			.satisfies((ex) -> assertThat(ex.getPolicy()).isEqualTo("money"));
	}

	@Test
	void failedBackendDecidesLocalPoliciesInMemoryAtTheirShare() {
		RateLimitBackend broken = (acquisitions) -> {
			throw new IllegalStateException("connection refused");
		};
		List<String> events = new java.util.ArrayList<>();
		LimitListener listener = new LimitListener() {

			@Override
			public void decided(Limit limit, boolean allowed, DecisionSource source) {
				events.add(source + " " + limit.name() + " " + allowed);
			}

			@Override
			public void fellBack(Limit limit, FailureMode mode, RuntimeException cause) {
				events.add("failed over " + limit.name() + " " + mode);
			}

			@Override
			public void storeAvailabilityChanged(LimitKind kind, boolean available, RuntimeException cause) {
				events.add("available " + available);
			}

		};
		RateLimiter limiter = new RateLimiter(broken, this.keys, Sleeper.system(),
				new InMemoryRateLimitBackend(new ManualTimeSource(), 100), listener);
		RateLimitPolicy local = RateLimitPolicy.builder("local").capacity(8).refill("8/1h")
			.failureMode(FailureMode.LOCAL).localInstances(4).build();
		RateLimitPolicy open = RateLimitPolicy.builder("open").capacity(1).refill("1/1h")
			.failureMode(FailureMode.OPEN).build();
		List<LimitRequest> call = List.of(new LimitRequest(local, "k", 1), new LimitRequest(open, "k", 1));
		// 8 shared by 4 instances: this one allows 2 while the backend is down
		assertThat(limiter.acquire(call).allowed()).isTrue();
		RateLimitOutcome second = limiter.acquire(call);
		assertThat(second.allowed()).isTrue();
		assertThat(second.decisions()).singleElement()
			.satisfies((pd) -> assertThat(pd.decision().limit()).isEqualTo(2));
		assertThat(limiter.acquire(call).allowed()).isFalse();
		assertThat(events).startsWith("available false", "failed over local LOCAL", "failed over open OPEN",
				"LOCAL_FALLBACK local true")
			.containsOnlyOnce("available false");
	}

	@Test
	void failedBackendGivesBackToTheLocalFallbackWhatACallCountedByOutcomeTook() {
		// Brute-force protection through an outage: only failed logins count, on the local fallback too.
		RateLimitBackend broken = (acquisitions) -> {
			throw new IllegalStateException("connection refused");
		};
		RateLimiter limiter = new RateLimiter(broken, this.keys, Sleeper.system(),
				new InMemoryRateLimitBackend(new ManualTimeSource(), 100), LimitListener.NONE);
		RateLimitPolicy failedLogins = RateLimitPolicy.builder("failed-logins").algorithm(Algorithm.FIXED_WINDOW)
			.capacity(5).window("15m").build();
		List<LimitRequest> attempt = List.of(new LimitRequest(failedLogins, "demo", 1, true));
		for (int i = 0; i < 10; i++) {
			RateLimitOutcome success = limiter.tryAcquire(attempt);
			assertThat(success.allowed()).isTrue();
			success.provisional().settle((policy) -> false);
		}
		for (int i = 0; i < 5; i++) {
			RateLimitOutcome failure = limiter.tryAcquire(attempt);
			assertThat(failure.allowed()).isTrue();
			failure.provisional().settle((policy) -> true);
		}
		assertThat(limiter.tryAcquire(attempt).allowed()).isFalse();
	}

	@Test
	void localShareDividesCapacityAndRateButKeepsWindows() {
		RateLimitPolicy bucket = RateLimitPolicy.builder("b").capacity(100).refill("10/1s").localInstances(4).build();
		assertThat(bucket.localShare().capacity()).isEqualTo(25);
		assertThat(bucket.localShare().refill()).isEqualTo(Refill.parse("10/4s"));
		RateLimitPolicy window = RateLimitPolicy.builder("w").algorithm(Algorithm.FIXED_WINDOW).capacity(3)
			.window("1m").localInstances(4).build();
		assertThat(window.localShare().capacity()).isEqualTo(1);
		assertThat(window.localShare().windowMicros()).isEqualTo(60_000_000L);
	}

	@Test
	void shadowPoliciesNeverRejectNorBlockOthers() {
		RateLimitPolicy shadow = RateLimitPolicy.builder("new-limit").capacity(1).refill("1/1h").shadow(true).build();
		RateLimitPolicy real = RateLimitPolicy.builder("real").capacity(10).refill("10/1h").build();
		List<LimitRequest> call = List.of(new LimitRequest(shadow, "k", 1), new LimitRequest(real, "k", 1));
		assertThat(this.limiter.acquire(call).allowed()).isTrue();
		RateLimitOutcome second = this.limiter.acquire(call);
		assertThat(second.allowed()).isTrue();
		assertThat(second.shadowDecisions()).singleElement()
			.satisfies((pd) -> assertThat(pd.decision().allowed()).isFalse());
		assertThat(second.decisions()).singleElement()
			.satisfies((pd) -> assertThat(pd.decision().remaining()).isEqualTo(8));
	}

	@Test
	void acquireOrThrowCarriesTheDecisionAndPolicyNames() {
		RateLimitPolicy policy = this.onePerHour.build();
		this.limiter.acquireOrThrow(policy, "k", 1);
		assertThatExceptionOfType(RateLimitExceededException.class)
			.isThrownBy(() -> this.limiter.acquireOrThrow(policy, "k", 1))
			.satisfies((ex) -> {
				assertThat(ex.getViolatedPolicies()).containsExactly("p");
				assertThat(ex.getOutcome().decisions().get(0).decision().allowed()).isFalse();
				assertThat(ex.getRetryAfterMicros()).isEqualTo(3_600_000_000L);
			});
	}

	private RateLimitOutcome acquire(RateLimitPolicy policy, String key) {
		return this.limiter.acquire(List.of(new LimitRequest(policy, key, 1)));
	}

}
