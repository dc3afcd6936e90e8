package dev.ratelimit.insight;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.LimitListener.DecisionSource;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.insight.HeavyHitters.Count;
import dev.ratelimit.insight.HeavyHitters.Snapshot;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the heavy hitters hear and for how long, on an injected clock.
 */
class HeavyHittersTests {

	private final AtomicLong nanos = new AtomicLong();

	private final HeavyHitters heavyHitters = new HeavyHitters(16, Duration.ofMinutes(1).toNanos(), this.nanos::get);

	private final RateLimitPolicy policy = RateLimitPolicy.builder("api").capacity(10).refill("10/1s")
		.build();

	@Test
	void refusalsAndUnitsAreCountedPerKeyButShadowDecisionsAndKeylessCallsAreNot() {
		decide("rl:api:{alice}", 3, true, DecisionSource.STORE);
		decide("rl:api:{alice}", 3, false, DecisionSource.STORE);
		decide("rl:api:{bob}", 1, false, DecisionSource.LOCAL_FALLBACK);
		decide("rl:api:{bob}", 1, false, DecisionSource.SHADOW);
		decide(null, 1, false, DecisionSource.STORE);
		Snapshot snapshot = this.heavyHitters.snapshot(LimitKind.RATE_LIMIT, "api").orElseThrow();
		assertThat(snapshot.refusals()).containsExactly(new Count("rl:api:{alice}", 1, 0),
				new Count("rl:api:{bob}", 1, 0));
		assertThat(snapshot.units()).containsExactly(new Count("rl:api:{alice}", 3, 0));
		assertThat(this.heavyHitters.snapshot(LimitKind.BUDGET, "api")).isEmpty();
	}

	@Test
	void countsCoverTheLastOneToTwoWindowsAndAreThenForgotten() {
		decide("rl:api:{alice}", 1, false, DecisionSource.STORE);
		this.nanos.addAndGet(Duration.ofSeconds(70).toNanos());
		decide("rl:api:{bob}", 1, false, DecisionSource.STORE);
		// alice's window ended 10 s ago: it is still read, with bob's.
		assertThat(refusals()).extracting(Count::key).containsExactly("rl:api:{alice}", "rl:api:{bob}");
		this.nanos.addAndGet(Duration.ofSeconds(60).toNanos());
		assertThat(refusals()).extracting(Count::key).containsExactly("rl:api:{bob}");
		this.nanos.addAndGet(Duration.ofSeconds(120).toNanos());
		assertThat(refusals()).isEmpty();
	}

	@Test
	void threadsCountingInStripesOfTheirOwnAreSummedAtReading() throws Exception {
		Thread[] threads = new Thread[4];
		for (int t = 0; t < threads.length; t++) {
			threads[t] = new Thread(() -> {
				for (int i = 0; i < 10_000; i++) {
					decide("rl:api:{alice}", 2, true, DecisionSource.STORE);
					decide("rl:api:{bob}", 1, false, DecisionSource.STORE);
				}
			});
			threads[t].start();
		}
		for (Thread thread : threads) {
			thread.join();
		}
		Snapshot snapshot = this.heavyHitters.snapshot(LimitKind.RATE_LIMIT, "api").orElseThrow();
		assertThat(snapshot.units()).containsExactly(new Count("rl:api:{alice}", 80_000, 0));
		assertThat(snapshot.refusals()).containsExactly(new Count("rl:api:{bob}", 40_000, 0));
	}

	@Test
	void theFleetsCountsAreTheSumOfEachInstances() {
		Snapshot a = new Snapshot(java.util.List.of(new Count("k1", 5, 1), new Count("k2", 2, 0)),
				java.util.List.of());
		Snapshot b = new Snapshot(java.util.List.of(new Count("k2", 7, 0)), java.util.List.of(new Count("k3", 9, 0)));
		Snapshot sum = Snapshot.sum(java.util.List.of(a, b));
		assertThat(sum.refusals()).containsExactly(new Count("k2", 9, 0), new Count("k1", 5, 1));
		assertThat(sum.units()).containsExactly(new Count("k3", 9, 0));
	}

	@Test
	void aSnapshotSurvivesItsTextWhateverTheKey() {
		Snapshot snapshot = new Snapshot(java.util.List.of(new Count("tab\there%0A\nnew", 5, 1)),
				java.util.List.of(new Count("plain", 2, 0)));
		assertThat(SnapshotText.read(SnapshotText.write(snapshot))).isEqualTo(snapshot);
		// A line that does not read is left out, the others kept.
		assertThat(SnapshotText.read("garbage\nr\t3\t0\tkey\nr\tx\t0\tbad").refusals())
			.containsExactly(new Count("key", 3, 0));
	}

	private java.util.List<Count> refusals() {
		return this.heavyHitters.snapshot(LimitKind.RATE_LIMIT, "api").orElseThrow().refusals();
	}

	private void decide(String key, long units, boolean allowed, DecisionSource source) {
		this.heavyHitters.decided(this.policy, key, units, allowed, 0, 10, source);
	}

}
