package dev.ratelimit.conformance;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import dev.ratelimit.core.Acquisition;
import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Take;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Plays the conformance table against one backend. Subclasses provide the
 * backend; the table and the assertions are the same for all.
 */
abstract class ConformanceTests {

	/** 2026-01-01T00:00:00Z, a whole second: fixed windows start at 0 ms. */
	static final long START_MICROS = 1_767_225_600_000_000L;

	private static final LimitKeys keys = new LimitKeys("rl", 128);

	/**
	 * Returns a fresh backend deciding with the given clock.
	 * @param clock the clock the backend must use
	 * @return the backend
	 */
	abstract RateLimitBackend backend(ManualTimeSource clock);

	/**
	 * Called after each decision with the keys it touched. Redis expires keys on
	 * its own clock, which the manual clock does not drive, so the Redis variants
	 * make them persistent: a TTL of 1 ms set at a simulated time must not fire
	 * in real time before the next simulated step. Persistence changes no
	 * decision; the TTLs themselves are checked by the script tests.
	 * @param keys the storage keys
	 */
	void afterDecision(List<String> keys) {
	}

	static Stream<Scenarios.Scenario> scenarios() {
		return Scenarios.all();
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("scenarios")
	void scenarioDecidesAsTabled(Scenarios.Scenario scenario) {
		ManualTimeSource clock = new ManualTimeSource(START_MICROS);
		RateLimitBackend backend = backend(clock);
		String key = keys.build(scenario.policy().name(), "conformance-" + System.nanoTime());
		long offset = 0;
		for (Scenarios.Step step : scenario.steps()) {
			clock.advanceMicros(step.atMillis() * 1000 - offset);
			offset = step.atMillis() * 1000;
			assertThat(backend.tryConsume(scenario.policy(), key, step.cost())).as("%s", step)
				.isEqualTo(step.expected());
			afterDecision(List.of(key));
		}
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("algorithms")
	void layeredDecisionIsAllOrNothing(Algorithm algorithm) {
		ManualTimeSource clock = new ManualTimeSource(START_MICROS);
		RateLimitBackend backend = backend(clock);
		RateLimitPolicy wide = policy("wide-" + algorithm.ordinal(), algorithm, 3);
		RateLimitPolicy narrow = RateLimitPolicy.builder("narrow").capacity(1).refill("1/1h").build();
		String tag = "layered-" + System.nanoTime();
		// Different values, so different hash tags: on a cluster, different slots.
		List<Acquisition> call = List.of(new Acquisition(wide, keys.build(wide.name(), "tenant-" + tag), 1),
				new Acquisition(narrow, keys.build(narrow.name(), "user-" + tag), 1));
		List<String> keys = call.stream().map(Acquisition::key).toList();
		List<Decision> first = backend.tryConsumeAll(call);
		afterDecision(keys);
		assertThat(first).allMatch(Decision::allowed);
		assertThat(first.get(0).remaining()).isEqualTo(2);
		List<Decision> second = backend.tryConsumeAll(call);
		afterDecision(keys);
		assertThat(second.get(1).allowed()).isFalse();
		assertThat(second.get(1).retryAfterMicros()).isEqualTo(3_600_000_000L);
		// the wide policy allowed but was not charged for the refused call
		assertThat(second.get(0).allowed()).isTrue();
		assertThat(second.get(0).remaining()).isEqualTo(2);
		assertThat(backend.tryConsume(wide, call.get(0).key(), 1).remaining()).isEqualTo(1);
	}

	/**
	 * A key whose quota shrinks (its plan or override changed) is decided within
	 * the smaller quota at once, even at the instant of its last decision under
	 * the larger one, where no refill is computed: never past it, never an error.
	 */
	@ParameterizedTest(name = "{0}")
	@MethodSource("algorithms")
	void aQuotaThatShrinksAtTheSameInstantAdmitsAtMostTheSmallerOne(Algorithm algorithm) {
		ManualTimeSource clock = new ManualTimeSource(START_MICROS);
		RateLimitBackend backend = backend(clock);
		RateLimitPolicy small = policy("shrinking-" + algorithm.ordinal(), algorithm, 3);
		RateLimitPolicy large = small.toBuilder(small.name()).capacity(1_000).build();
		String key = keys.build(small.name(), "shrinking-" + System.nanoTime());
		assertThat(backend.tryConsume(large, key, 1).allowed()).isTrue();
		afterDecision(List.of(key));
		int admitted = 0;
		for (int i = 0; i < 10; i++) {
			if (backend.tryConsume(small, key, 1).allowed()) {
				admitted++;
			}
			afterDecision(List.of(key));
		}
		assertThat(admitted).isLessThanOrEqualTo(3);
	}

	static Stream<Algorithm> algorithms() {
		return Stream.of(Algorithm.values());
	}

	/** The algorithms that can count calls by outcome: every one but the shaping leaky bucket. */
	static Stream<Algorithm> givingBack() {
		return algorithms().filter((algorithm) -> algorithm != Algorithm.LEAKY_BUCKET_SHAPING);
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("givingBack")
	void giveBackReturnsExactlyWhatWasTaken(Algorithm algorithm) {
		ManualTimeSource clock = new ManualTimeSource(START_MICROS);
		RateLimitBackend backend = backend(clock);
		RateLimitPolicy policy = policy("back-" + algorithm.ordinal(), algorithm, 3);
		String key = keys.build(policy.name(), "give-back-" + System.nanoTime());
		List<Take> takes = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			clock.advanceMicros(1_000);
			takes.add(take(backend, policy, key, 1));
		}
		assertThat(takes).allMatch(Take::tookUnits);
		assertThat(take(backend, policy, key, 1).decision().allowed()).isFalse();
		clock.advanceMicros(1_000);
		giveBack(backend, policy, key, takes.get(1));
		// One unit back: one more call, and not two.
		assertThat(take(backend, policy, key, 1).decision().allowed()).isTrue();
		assertThat(take(backend, policy, key, 1).decision().allowed()).isFalse();
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("givingBack")
	void lateGiveBackMakesNoRoomInALaterWindow(Algorithm algorithm) {
		ManualTimeSource clock = new ManualTimeSource(START_MICROS);
		RateLimitBackend backend = backend(clock);
		RateLimitPolicy policy = policy("late-" + algorithm.ordinal(), algorithm, 3);
		String key = keys.build(policy.name(), "late-" + System.nanoTime());
		List<Take> takes = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			takes.add(take(backend, policy, key, 1));
		}
		// Two windows on (and the buckets long full again): what was taken counts no more.
		clock.advance(Duration.ofHours(2));
		assertThat(take(backend, policy, key, 2).decision().allowed()).isTrue();
		takes.forEach((t) -> giveBack(backend, policy, key, t));
		// The late give-back adds nothing to the later window: one unit left, as before it.
		assertThat(take(backend, policy, key, 1).decision().allowed()).isTrue();
		assertThat(take(backend, policy, key, 1).decision().allowed()).isFalse();
	}

	@Test
	void fixedWindowGiveBackAfterTheWindowTurnedGivesNothingBack() {
		ManualTimeSource clock = new ManualTimeSource(START_MICROS);
		RateLimitBackend backend = backend(clock);
		RateLimitPolicy policy = policy("late-fw", Algorithm.FIXED_WINDOW, 2);
		String key = keys.build(policy.name(), "turn-" + System.nanoTime());
		clock.advance(Duration.ofMinutes(59));
		Take early = take(backend, policy, key, 1);
		clock.advance(Duration.ofMinutes(1));
		// The window turned at the hour: the next one has its own 2, and the early unit is not theirs to get back.
		take(backend, policy, key, 2);
		giveBack(backend, policy, key, early);
		assertThat(take(backend, policy, key, 1).decision().allowed()).isFalse();
	}

	@Test
	void slidingCounterGivesBackToThePreviousWindowWhileItWeighs() {
		ManualTimeSource clock = new ManualTimeSource(START_MICROS);
		RateLimitBackend backend = backend(clock);
		RateLimitPolicy policy = policy("prev-sc", Algorithm.SLIDING_WINDOW_COUNTER, 2);
		String key = keys.build(policy.name(), "prev-" + System.nanoTime());
		Take first = take(backend, policy, key, 1);
		take(backend, policy, key, 1);
		// Just into the next window the previous one still weighs fully: no room.
		clock.advance(Duration.ofHours(1));
		assertThat(take(backend, policy, key, 1).decision().allowed()).isFalse();
		giveBack(backend, policy, key, first);
		assertThat(take(backend, policy, key, 1).decision().allowed()).isTrue();
		assertThat(take(backend, policy, key, 1).decision().allowed()).isFalse();
	}

	private Take take(RateLimitBackend backend, RateLimitPolicy policy, String key, long cost) {
		Take take = backend.tryTakeAll(List.of(new Acquisition(policy, key, cost))).get(0);
		afterDecision(List.of(key));
		return take;
	}

	private void giveBack(RateLimitBackend backend, RateLimitPolicy policy, String key, Take take) {
		backend.giveBack(policy, key, 1, take.receipt());
		afterDecision(List.of(key));
	}

	private static RateLimitPolicy policy(String name, Algorithm algorithm, long capacity) {
		RateLimitPolicy.Builder builder = RateLimitPolicy.builder(name).algorithm(algorithm).capacity(capacity);
		return algorithm.isRateBased() ? builder.refill(capacity + "/1h").build() : builder.window("1h").build();
	}

}
