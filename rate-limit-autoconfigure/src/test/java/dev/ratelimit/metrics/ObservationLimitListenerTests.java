package dev.ratelimit.metrics;

import java.lang.management.ManagementFactory;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;

import dev.ratelimit.budget.Amounts;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.LimitListener.DecisionSource;
import dev.ratelimit.core.RateLimitBackendUnavailableException;
import dev.ratelimit.core.RateLimitPolicy;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the observation listener records on a real registry's current
 * observation, for each kind of limit and each event, and that with no current
 * observation it allocates nothing.
 */
class ObservationLimitListenerTests {

	private final RecordingObservationHandler handler = new RecordingObservationHandler();

	private final ObservationRegistry registry = ObservationRegistry.create();

	private final RateLimitPolicy search = RateLimitPolicy.builder("search").capacity(10).refill("10/1m").build();

	private final RateLimitPolicy trial = RateLimitPolicy.builder("trial")
		.capacity(1)
		.refill("1/1m")
		.shadow(true)
		.build();

	private final BudgetPolicy tokens = BudgetPolicy.builder("llm").limit("day", "5.00").build();

	private final ConcurrencyPolicy uploads = ConcurrencyPolicy.builder("uploads").permits(2).build();

	private final String storageKey = new LimitKeys("rl", 128).build("search", "user-42");

	ObservationLimitListenerTests() {
		this.registry.observationConfig().observationHandler(this.handler);
	}

	@Test
	void everyKindOfDecisionIsKeyValuesOfItsLimitAndEveryRefusalAnEvent() {
		ObservationLimitListener listener = new ObservationLimitListener(() -> this.registry, false);
		Observation.Context context = observed(() -> {
			listener.decided(this.search, this.storageKey, 1, true, 9, 10, DecisionSource.STORE);
			listener.decided(this.tokens, "rl:llm:{t1}", 250_000, false, 1_500_000, 5 * Amounts.MICROS_PER_UNIT,
					DecisionSource.STORE);
			listener.decided(this.uploads, "user-42", 1, true, -1, -1, DecisionSource.STORE);
			listener.decided(this.trial, this.storageKey, 1, false, 0, 1, DecisionSource.SHADOW);
		});

		// Calls simply let through are key values only: no event per admitted decision.
		assertThat(this.handler.events(context, ObservationLimitListener.DECISION_EVENT))
			.containsExactly("budget llm denied, remaining 1.5 of 5", "policy trial shadow, remaining 0 of 1");
		assertThat(value(context, "rate.limit.policy.search.remaining")).isEqualTo("9");
		assertThat(value(context, "rate.limit.policy.search.outcome")).isEqualTo("allowed");
		assertThat(value(context, "rate.limit.budget.llm.remaining")).isEqualTo("1.5");
		assertThat(value(context, "rate.limit.budget.llm.capacity")).isEqualTo("5");
		assertThat(value(context, "rate.limit.concurrency.uploads.outcome")).isEqualTo("allowed");
		assertThat(value(context, "rate.limit.concurrency.uploads.remaining")).isNull();
		assertThat(value(context, "rate.limit.policy.trial.outcome")).isEqualTo("shadow");
		assertThat(value(context, "rate.limit.policy.search.key")).isNull();
	}

	@Test
	void theCallersKeyIsRecordedOnlyWhenAskedFor() {
		ObservationLimitListener listener = new ObservationLimitListener(() -> this.registry, true);
		Observation.Context context = observed(() -> {
			listener.decided(this.search, this.storageKey, 1, true, 9, 10, DecisionSource.STORE);
			listener.decided(this.uploads, "user-7", 1, true, -1, -1, DecisionSource.STORE);
		});

		assertThat(value(context, "rate.limit.policy.search.key")).isEqualTo("user-42");
		assertThat(value(context, "rate.limit.concurrency.uploads.key")).isEqualTo("user-7");
	}

	@Test
	void aFailureModeAndALocalDecisionAfterItAreRecorded() {
		ObservationLimitListener listener = new ObservationLimitListener(() -> this.registry, false);
		Observation.Context context = observed(() -> {
			listener.fellBack(this.search, FailureMode.LOCAL,
					new RateLimitBackendUnavailableException("search", new IllegalStateException("down")));
			listener.decided(this.search, this.storageKey, 1, false, 0, 5, DecisionSource.LOCAL_FALLBACK);
		});

		assertThat(this.handler.events(context, ObservationLimitListener.FALLBACK_EVENT))
			.containsExactly("policy search fallback local: RateLimitBackendUnavailableException");
		assertThat(this.handler.events(context, ObservationLimitListener.DECISION_EVENT))
			.containsExactly("policy search fallback (denied locally), remaining 0 of 5");
		assertThat(value(context, "rate.limit.policy.search.outcome")).isEqualTo("fallback");
		assertThat(value(context, "rate.limit.policy.search.fallback")).isEqualTo("local");
	}

	@Test
	void aShedCallIsRecordedWithItsClass() {
		ObservationLimitListener listener = new ObservationLimitListener(() -> this.registry, false);
		Observation.Context context = observed(() -> listener.shed(this.uploads, "sheddable", false));

		assertThat(this.handler.events(context, ObservationLimitListener.SHED_EVENT))
			.containsExactly("concurrency uploads shed sheddable");
		assertThat(value(context, "rate.limit.concurrency.uploads.outcome")).isEqualTo("shed");
		assertThat(value(context, "rate.limit.concurrency.uploads.priority")).isEqualTo("sheddable");
	}

	@Test
	void withoutARegistryOrACurrentObservationNothingIsRecorded() {
		new ObservationLimitListener(() -> null, false).decided(this.search, this.storageKey, 1, true, 9, 10,
				DecisionSource.STORE);
		new ObservationLimitListener(() -> this.registry, false).decided(this.search, this.storageKey, 1, false, 0,
				10, DecisionSource.STORE);

		assertThat(this.handler.stopped()).isEmpty();
		assertThat(this.registry.getCurrentObservation()).isNull();
	}

	@Test
	void withARegistryButNoCurrentObservationADecisionAllocatesNothing() {
		ObservationLimitListener listener = new ObservationLimitListener(() -> this.registry, false);
		com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory
			.getThreadMXBean();
		long thread = Thread.currentThread().getId();
		// Warm up: class loading, and the JIT's own first compilations, happen before the measured loop.
		for (int i = 0; i < 200_000; i++) {
			decideOften(listener, i);
		}
		// What reading the counter itself costs, taken away from the measurement (0 on HotSpot; kept honest).
		long overhead = threads.getThreadAllocatedBytes(thread);
		overhead = threads.getThreadAllocatedBytes(thread) - overhead;
		// The fewest bytes of five rounds: an allocation per decision shows in every round (10,000 decisions each),
		// while the JIT recompiling a method mid-round (its interpreted code allocates where the compiled code did
		// not) shows in one, as it did once in a full build.
		long fewest = Long.MAX_VALUE;
		for (int round = 0; round < 5; round++) {
			long before = threads.getThreadAllocatedBytes(thread);
			for (int i = 0; i < 10_000; i++) {
				decideOften(listener, i);
			}
			fewest = Math.min(fewest, threads.getThreadAllocatedBytes(thread) - before - overhead);
		}

		assertThat(fewest).isZero();
	}

	private void decideOften(ObservationLimitListener listener, int i) {
		listener.decided(this.search, this.storageKey, 1, true, 9 - (i & 7), 10, DecisionSource.STORE);
		listener.decided(this.tokens, this.storageKey, 1_000, (i & 1) == 0, i, 5_000_000, DecisionSource.STORE);
		listener.shed(this.uploads, "normal", false);
	}

	/** Runs the events inside a started observation in scope, and returns its context once stopped. */
	private Observation.Context observed(Runnable events) {
		Observation observation = Observation.start("http.server.requests", this.registry);
		try (Observation.Scope scope = observation.openScope()) {
			events.run();
		}
		observation.stop();
		return observation.getContext();
	}

	private static String value(Observation.Context context, String key) {
		return RecordingObservationHandler.value(context, key);
	}

}
