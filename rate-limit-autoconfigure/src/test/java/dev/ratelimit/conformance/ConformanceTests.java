package dev.ratelimit.conformance;

import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import dev.ratelimit.core.Acquisition;
import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitPolicy;
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

	static Stream<Algorithm> algorithms() {
		return Stream.of(Algorithm.values());
	}

	private static RateLimitPolicy policy(String name, Algorithm algorithm, long capacity) {
		RateLimitPolicy.Builder builder = RateLimitPolicy.builder(name).algorithm(algorithm).capacity(capacity);
		return algorithm.isRateBased() ? builder.refill(capacity + "/1h").build() : builder.window("1h").build();
	}

}
