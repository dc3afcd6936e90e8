package dev.ratelimit.plans;

import java.lang.management.ManagementFactory;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The recent distinct-caller estimate: exact for a handful of callers, within
 * a few percent for many, forgetting callers after two windows of the
 * injected clock, and allocating nothing per value counted.
 */
class RecentDistinctTests {

	private static final long MINUTE = Duration.ofMinutes(1).toNanos() / 1_000;

	// At a window's start: windows are aligned to the clock's zero.
	private final ManualTimeSource clock = new ManualTimeSource(0);

	private final RecentDistinct callers = new RecentDistinct(this.clock, 5 * MINUTE);

	@Test
	void aFewCallersAreCountedExactlyWhateverHowOftenTheyCall() {
		assertThat(this.callers.estimate()).isZero();
		for (int call = 0; call < 100; call++) {
			this.callers.add(("rl:{agent-runs}:user-" + (call % 3)).hashCode());
		}
		assertThat(this.callers.estimate()).isEqualTo(3);
	}

	@Test
	void manyCallersAreEstimatedWithinTheSketchsError() {
		for (int caller = 0; caller < 20_000; caller++) {
			this.callers.add(("tenant-" + caller).hashCode());
		}
		// 256 registers: a standard error of 1.04 / 16 = 6.5 %; three of them.
		assertThat((double) this.callers.estimate()).isCloseTo(20_000, within(20_000 * 0.195));
		for (int caller = 0; caller < 50; caller++) {
			this.callers.add(("tenant-" + caller).hashCode());
		}
		assertThat((double) this.callers.estimate()).isCloseTo(20_000, within(20_000 * 0.195));
	}

	@Test
	void aCallerCountsForAtLeastOneWindowAndAtMostTwo() {
		this.callers.add("ann".hashCode());
		this.clock.advance(Duration.ofMinutes(4));
		this.callers.add("bob".hashCode());
		assertThat(this.callers.estimate()).isEqualTo(2);

		// ann was seen in the previous window, bob too: both still recent.
		this.clock.advance(Duration.ofMinutes(2));
		assertThat(this.callers.estimate()).isEqualTo(2);
		this.callers.add("cid".hashCode());

		// Two windows on: ann's and bob's window is gone, cid's is the previous one.
		this.clock.advance(Duration.ofMinutes(5));
		assertThat(this.callers.estimate()).isEqualTo(1);

		this.clock.advance(Duration.ofMinutes(30));
		assertThat(this.callers.estimate()).isZero();
	}

	@Test
	void countingAllocatesNothing() {
		com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory
			.getThreadMXBean();
		String[] keys = new String[1_000];
		for (int i = 0; i < keys.length; i++) {
			keys[i] = "rl:{agent-runs}:user-" + i;
			this.callers.add(keys[i].hashCode());
		}
		long before = threads.getCurrentThreadAllocatedBytes();
		for (int round = 0; round < 100; round++) {
			for (String key : keys) {
				this.callers.add(key.hashCode());
			}
		}
		long allocated = threads.getCurrentThreadAllocatedBytes() - before;
		// The measurement itself may allocate a little; 100,000 adds allocating would be megabytes.
		assertThat(allocated).isLessThan(1_000);
	}

}
