package dev.ratelimit.insight;

import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sketch's guarantees, against an exact count of the same stream: every
 * key heavier than the lightest tracked count is tracked, no count is below
 * the truth nor above it by more than its error, and adding allocates nothing.
 */
class SpaceSavingTests {

	@Test
	void fewerKeysThanItTracksAreCountedExactly() {
		SpaceSaving sketch = new SpaceSaving(8);
		for (int i = 0; i < 100; i++) {
			sketch.add("k" + (i % 5), 1 + (i % 5));
		}
		assertThat(sketch.entries()).extracting(HeavyHitters.Count::key, HeavyHitters.Count::count,
				HeavyHitters.Count::error)
			.containsExactly(org.assertj.core.groups.Tuple.tuple("k4", 100L, 0L),
					org.assertj.core.groups.Tuple.tuple("k3", 80L, 0L),
					org.assertj.core.groups.Tuple.tuple("k2", 60L, 0L),
					org.assertj.core.groups.Tuple.tuple("k1", 40L, 0L),
					org.assertj.core.groups.Tuple.tuple("k0", 20L, 0L));
	}

	@Test
	void aFloodOfFreshKeysCannotHideTheHeavyOnes() {
		// The attack: a million one-off keys around two noisy callers, to push them out of a 32-key sketch.
		SpaceSaving sketch = new SpaceSaving(32);
		Map<String, Long> truth = new HashMap<>();
		Random random = new Random(7);
		for (int i = 0; i < 1_000_000; i++) {
			String key = switch (random.nextInt(10)) {
				case 0 -> "noisy-a";
				case 1 -> "noisy-b";
				default -> "fresh-" + i;
			};
			long weight = 1 + random.nextInt(3);
			sketch.add(key, weight);
			truth.merge(key, weight, Long::sum);
		}
		List<HeavyHitters.Count> entries = sketch.entries();
		assertThat(entries).hasSize(32);
		assertThat(entries.subList(0, 2)).extracting(HeavyHitters.Count::key)
			.containsExactlyInAnyOrder("noisy-a", "noisy-b");
		long lightest = entries.get(entries.size() - 1).count();
		for (HeavyHitters.Count count : entries) {
			long exact = truth.getOrDefault(count.key(), 0L);
			assertThat(count.count()).isGreaterThanOrEqualTo(exact);
			assertThat(count.count() - count.error()).isLessThanOrEqualTo(exact);
		}
		// Every key heavier than the lightest tracked count is tracked.
		truth.forEach((key, exact) -> {
			if (exact > lightest) {
				assertThat(entries).extracting(HeavyHitters.Count::key).contains(key);
			}
		});
	}

	@Test
	void keysStayFindableThroughManyReplacements() {
		// Colliding probe runs and backward-shift deletion: a reference of what is tracked must match.
		SpaceSaving sketch = new SpaceSaving(16);
		Random random = new Random(11);
		for (int i = 0; i < 200_000; i++) {
			sketch.add("key-" + random.nextInt(64), 1);
		}
		List<HeavyHitters.Count> before = sketch.entries();
		for (HeavyHitters.Count count : before) {
			sketch.add(count.key(), 1_000_000);
		}
		// Had any tracked key become unfindable, adding it again would have replaced another entry.
		assertThat(sketch.entries()).extracting(HeavyHitters.Count::key)
			.containsExactlyInAnyOrderElementsOf(before.stream().map(HeavyHitters.Count::key).toList());
	}

	@Test
	void clearingForgetsEveryKey() {
		SpaceSaving sketch = new SpaceSaving(4);
		sketch.add("a", 5);
		sketch.clear();
		sketch.add("b", 1);
		assertThat(sketch.entries()).extracting(HeavyHitters.Count::key).containsExactly("b");
	}

	@Test
	void addingAllocatesNothingWhetherTheKeyIsTrackedOrNot() {
		SpaceSaving sketch = new SpaceSaving(64);
		String[] keys = new String[1_000];
		for (int i = 0; i < keys.length; i++) {
			keys[i] = "caller-" + i;
			keys[i].hashCode();
		}
		com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory
			.getThreadMXBean();
		// The fewest bytes of any round once warm: an allocation per add shows in every round (100,000 adds), while
		// a round that ran partly in code the JIT had not finished (a busy machine) may allocate a few bytes.
		long fewest = Long.MAX_VALUE;
		for (int round = 0; round < 20 && fewest != 0; round++) {
			long before = threads.getCurrentThreadAllocatedBytes();
			for (int i = 0; i < 100_000; i++) {
				// tracked keys (hits) and a flood of others (misses, each replacing the lightest)
				sketch.add(keys[(i % 3 == 0) ? i % 8 : i % keys.length], 1);
			}
			long allocated = threads.getCurrentThreadAllocatedBytes() - before;
			if (round >= 2) {
				fewest = Math.min(fewest, allocated);
			}
		}
		assertThat(fewest).isZero();
	}

}
