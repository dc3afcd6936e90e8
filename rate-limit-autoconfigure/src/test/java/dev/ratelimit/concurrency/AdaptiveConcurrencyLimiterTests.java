package dev.ratelimit.concurrency;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitListener;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The adaptive cap's admission by priority and what its estimate hears, on an
 * injected clock: AIMD makes each sample visible in the limit (a success with
 * enough in flight adds one, a drop multiplies by the backoff ratio).
 */
class AdaptiveConcurrencyLimiterTests {

	private final ManualTimeSource time = new ManualTimeSource();

	private final List<String> shed = new ArrayList<>();

	private double jitter;

	private final AdaptiveConcurrencyLimiter limiter = new AdaptiveConcurrencyLimiter(this.time, () -> this.jitter,
			new LimitListener() {
				@Override
				public void shed(Limit cap, String priority, boolean shadow) {
					AdaptiveConcurrencyLimiterTests.this.shed.add(priority + (shadow ? " (shadow)" : ""));
				}
			});

	@Test
	void aClassWithinItsShareIsNeverShedWhenTheCapIsFull() {
		ConcurrencyPolicy cap = aimd(10, Map.of(Priority.CRITICAL, 50));
		// Critical's unused half is kept for it: sheddable calls fill the rest.
		List<Permit> sheddable = take(cap, "sheddable", 5);
		assertThat(this.limiter.limit("api")).hasValue(10);
		assertThatExceptionOfType(LoadShedException.class).isThrownBy(() -> this.limiter.acquire(cap, "sheddable"));
		// Critical has 5 guaranteed, and the sheddable calls running do not stand in its way: it gets the whole
		// limit while they end (the calls in flight pass the limit meanwhile), and the 11th is shed.
		List<Permit> critical = take(cap, "critical", 10);
		assertThat(critical).hasSize(10);
		assertThatExceptionOfType(LoadShedException.class).isThrownBy(() -> this.limiter.acquire(cap, "critical"))
			.satisfies((ex) -> assertThat(ex.getPriority()).isEqualTo(Priority.CRITICAL));
		assertThat(this.limiter.inFlight("api", Priority.CRITICAL)).isEqualTo(10);
		assertThat(this.limiter.inFlight("api", Priority.SHEDDABLE)).isEqualTo(5);
		assertThat(this.shed).containsExactly("sheddable", "critical");
		release(sheddable);
		release(critical);
	}

	@Test
	void theLowestClassIsShedFirstBecauseItCannotUseTheSharesAboveIt() {
		// 10 permits: critical keeps 4, normal 3; background and sheddable have none of their own.
		ConcurrencyPolicy cap = aimd(10, Map.of(Priority.CRITICAL, 40, Priority.NORMAL, 30));
		List<Permit> background = take(cap, "background", 3);
		// 3 in flight and 7 kept for critical and normal: sheddable finds no room, nor background.
		assertThatExceptionOfType(LoadShedException.class).isThrownBy(() -> this.limiter.acquire(cap, "sheddable"));
		assertThatExceptionOfType(LoadShedException.class).isThrownBy(() -> this.limiter.acquire(cap, "background"));
		// Normal counts only itself and critical, which keeps its unused 4: normal gets 6...
		List<Permit> normal = take(cap, "normal", 6);
		assertThatExceptionOfType(LoadShedException.class).isThrownBy(() -> this.limiter.acquire(cap, "normal"));
		// ...and critical, counting only itself, the whole limit.
		List<Permit> critical = take(cap, "critical", 10);
		assertThatExceptionOfType(LoadShedException.class).isThrownBy(() -> this.limiter.acquire(cap, "critical"));
		assertThat(this.shed).containsExactly("sheddable", "background", "normal", "critical");
		release(background);
		release(normal);
		release(critical);
	}

	@Test
	void aHigherClassAskingForMoreThanItsSharePushesTheClassesBelowItBack() {
		ConcurrencyPolicy cap = aimd(10, Map.of(Priority.CRITICAL, 20, Priority.NORMAL, 10));
		List<Permit> critical = take(cap, "critical", 6);
		List<Permit> normal = take(cap, "normal", 4);
		// Full, yet a critical call gets in: that is demand the class below must now leave room for.
		critical.add(this.limiter.acquire(cap, "critical"));
		// Left out of the estimate, so that the limit stays at 10.
		normal.remove(0).release(Permit.Ending.ABANDONED);
		assertThatExceptionOfType(LoadShedException.class).isThrownBy(() -> this.limiter.acquire(cap, "normal"));
		// Critical stops asking: within seconds its demand is forgotten, and normal gets the room back.
		release(critical.subList(0, 4));
		this.time.advance(Duration.ofSeconds(10));
		normal.add(this.limiter.acquire(cap, "normal"));
		normal.add(this.limiter.acquire(cap, "normal"));
		assertThat(this.shed).containsExactly("normal");
		release(critical.subList(4, 7));
		release(normal);
	}

	@Test
	void aBurstOfAClassThatFitsUnderTheLimitOnAverageQueuesInsteadOfBeingShed() {
		ConcurrencyPolicy cap = aimd(10, Map.of(Priority.CRITICAL, 20));
		// Ten critical calls a second of 40 ms each: 0.4 in flight on average, well under the limit.
		steadyCalls(cap, "critical", Duration.ofMillis(40), Duration.ofMillis(100), 20);
		// A burst at once: critical runs past the limit up to its burst ceiling (three times it), then is shed...
		List<Permit> burst = take(cap, "critical", 30);
		assertThatExceptionOfType(LoadShedException.class).isThrownBy(() -> this.limiter.acquire(cap, "critical"));
		assertThat(this.limiter.inFlight("api", Priority.CRITICAL)).isEqualTo(30);
		// ...while a normal call, which has no such allowance while critical is asking, is shed.
		assertThatExceptionOfType(LoadShedException.class).isThrownBy(() -> this.limiter.acquire(cap, "normal"));
		assertThat(this.shed).containsExactly("critical", "normal");
		release(burst);
	}

	@Test
	void aClassWhoseCallsDoNotFitUnderTheLimitOnAverageIsHeldToTheLimit() {
		ConcurrencyPolicy cap = aimd(10, Map.of(Priority.CRITICAL, 20));
		// Slow critical calls (1.5 s): a burst of them soon means more in flight than the limit on average...
		steadyCalls(cap, "critical", Duration.ofMillis(1500), Duration.ofMillis(100), 3);
		List<Permit> burst = take(cap, "critical", 10);
		// ...so the burst is held to the limit (and the latency with it), not to the ceiling.
		assertThatExceptionOfType(LoadShedException.class).isThrownBy(() -> this.limiter.acquire(cap, "critical"));
		assertThat(this.limiter.inFlight("api", Priority.CRITICAL)).isEqualTo(10);
		release(burst);
	}

	@Test
	void aClassWithNoEndedCallsYetHasNoAllowanceForABurst() {
		ConcurrencyPolicy cap = aimd(10, Map.of());
		List<Permit> burst = take(cap, "critical", 10);
		assertThatExceptionOfType(LoadShedException.class).isThrownBy(() -> this.limiter.acquire(cap, "critical"));
		release(burst);
	}

	@Test
	void theCallsInFlightNeverPassTwiceTheLimitNorMaxLimit() {
		ConcurrencyPolicy cap = ConcurrencyPolicy.builder("api")
			.adaptive(new AdaptiveLimit(AdaptiveLimit.Algorithm.AIMD, 10, 1, 12, 0, null, null, null, null))
			.shedding(new Shedding(Map.of(), Priority.SHEDDABLE, 1_000_000L, 4_000_000L))
			.key("header('X-Priority')")
			.build();
		List<Permit> held = take(cap, "sheddable", 10);
		// Critical is not kept out by the sheddable calls running, but the whole may not pass max-limit.
		held.addAll(take(cap, "critical", 2));
		assertThatExceptionOfType(LoadShedException.class).isThrownBy(() -> this.limiter.acquire(cap, "critical"));
		release(held);
	}

	@Test
	void aCallerCannotClimbByNamingNoClassOrAnUnknownOne() {
		ConcurrencyPolicy cap = aimd(4, Map.of(Priority.CRITICAL, 50));
		List<Permit> held = take(cap, "sheddable", 2);
		for (String claimed : new String[] { null, "", "CRITICAL!", "root", "critical\u0000" }) {
			assertThatExceptionOfType(LoadShedException.class).isThrownBy(() -> this.limiter.acquire(cap, claimed))
				.satisfies((ex) -> assertThat(ex.getPriority()).isEqualTo(Priority.SHEDDABLE));
		}
		assertThat(this.limiter.acquire(cap, " Critical ")).isNotNull();
		release(held);
	}

	@Test
	void aShedCallFeedsNothingToTheEstimate() {
		ConcurrencyPolicy cap = aimd(4, Map.of());
		List<Permit> held = take(cap, "normal", 4);
		for (int i = 0; i < 50; i++) {
			assertThatExceptionOfType(LoadShedException.class).isThrownBy(() -> this.limiter.acquire(cap, "normal"));
		}
		// Fifty refusals are no drops: the limit is where it was.
		assertThat(this.limiter.limit("api")).hasValue(4);
		release(held);
	}

	@Test
	void aFailureOrACallOverTheTimeoutIsADropAndAnAbandonedCallIsNoSample() {
		ConcurrencyPolicy cap = aimd(10, Map.of());
		List<Permit> held = take(cap, "normal", 10);
		held.get(0).release(Permit.Ending.ABANDONED);
		assertThat(this.limiter.limit("api")).hasValue(10);
		held.get(1).release(Permit.Ending.FAILED);
		assertThat(this.limiter.limit("api")).hasValue(9);
		this.time.advance(Duration.ofSeconds(3));
		// Succeeded, but after the 2 s timeout: a drop all the same.
		held.get(2).release();
		assertThat(this.limiter.limit("api")).hasValue(8);
		// Released twice: heard once.
		held.get(2).release(Permit.Ending.FAILED);
		assertThat(this.limiter.limit("api")).hasValue(8);
		release(held.subList(3, 10));
	}

	@Test
	void aCallLetPastTheLimitIsNoSampleForIt() {
		ConcurrencyPolicy cap = aimd(10, Map.of());
		List<Permit> held = take(cap, "normal", 10);
		// The normal calls running do not keep critical out: it runs past the limit, in a queue the cap allowed.
		Permit pastLimit = this.limiter.acquire(cap, "critical");
		pastLimit.release();
		assertThat(this.limiter.limit("api")).hasValue(10);
		// A call admitted within the limit, with the cap busy, is heard.
		held.get(9).release();
		assertThat(this.limiter.limit("api")).hasValue(11);
		release(held.subList(0, 9));
	}

	@Test
	void successesWithTheCapBusyRaiseTheLimit() {
		ConcurrencyPolicy cap = aimd(10, Map.of());
		List<Permit> held = take(cap, "normal", 10);
		// Taken with 10 in flight: the cap was busy, so its success says the limit may grow.
		held.get(9).release();
		assertThat(this.limiter.limit("api")).hasValue(11);
		release(held.subList(0, 9));
	}

	@Test
	void aShadowCapLetsThroughWhatItWouldShedAndSaysSo() {
		ConcurrencyPolicy cap = aimd(2, Map.of()).toBuilder().shadow(true).build();
		List<Permit> held = take(cap, "normal", 3);
		assertThat(held).hasSize(3);
		assertThat(this.shed).containsExactly("normal (shadow)");
		release(held);
	}

	@Test
	void shedCallsAreToldToComeBackAfterAWaitSpreadOverTheConfiguredRange() {
		ConcurrencyPolicy cap = aimd(1, Map.of());
		Permit held = this.limiter.acquire(cap, "normal");
		this.jitter = 0.0;
		assertThat(shedAfter(cap)).isEqualTo(1_000_000L);
		this.jitter = 0.5;
		assertThat(shedAfter(cap)).isEqualTo(3_000_000L);
		this.jitter = 0.999;
		assertThat(shedAfter(cap)).isEqualTo(5_000_000L);
		held.release();
	}

	@Test
	void aChangedCapStartsAgainFromItsInitialLimit() {
		ConcurrencyPolicy cap = aimd(10, Map.of());
		take(cap, "normal", 1).get(0).release(Permit.Ending.FAILED);
		assertThat(this.limiter.limit("api")).hasValue(9);
		ConcurrencyPolicy changed = cap.toBuilder()
			.adaptive(new AdaptiveLimit(AdaptiveLimit.Algorithm.AIMD, 6, 1, 6, 2_000_000L, null, null, null, 0.9))
			.build();
		this.limiter.acquire(changed, "normal").release(Permit.Ending.ABANDONED);
		assertThat(this.limiter.limit("api")).hasValue(6);
	}

	@Test
	void everyAlgorithmDecidesWithoutWaiting() {
		for (AdaptiveLimit.Algorithm algorithm : AdaptiveLimit.Algorithm.values()) {
			ConcurrencyPolicy cap = ConcurrencyPolicy.builder("cap-" + algorithm.name().toLowerCase())
				.adaptive(AdaptiveLimit.of(algorithm))
				.build();
			assertThat(this.limiter.mayBlock(cap)).isFalse();
			Permit permit = this.limiter.acquire(cap, null);
			this.time.advance(Duration.ofMillis(5));
			permit.release();
			assertThat(this.limiter.limit(cap.name())).hasValue(20);
		}
	}

	private long shedAfter(ConcurrencyPolicy cap) {
		try {
			this.limiter.acquire(cap, "normal");
		}
		catch (LoadShedException ex) {
			return ex.getRetryAfterMicros();
		}
		throw new AssertionError("not shed");
	}

	private ConcurrencyPolicy aimd(int limit, Map<Priority, Integer> shares) {
		return ConcurrencyPolicy.builder("api")
			.adaptive(new AdaptiveLimit(AdaptiveLimit.Algorithm.AIMD, limit, 1, 100, 2_000_000L, null, null, null,
					0.9))
			.shedding(new Shedding(shares, Priority.SHEDDABLE, 1_000_000L, 4_000_000L))
			.key("header('X-Priority')")
			.build();
	}

	/** Calls of a class one after another, each lasting {@code latency}, then the clock moves on by {@code gap}. */
	private void steadyCalls(ConcurrencyPolicy cap, String priority, Duration latency, Duration gap, int count) {
		for (int i = 0; i < count; i++) {
			Permit permit = this.limiter.acquire(cap, priority);
			this.time.advance(latency);
			permit.release();
			this.time.advance(gap);
		}
		assertThat(this.limiter.limit("api")).hasValue(10);
	}

	private List<Permit> take(ConcurrencyPolicy cap, String priority, int count) {
		List<Permit> permits = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			permits.add(this.limiter.acquire(cap, priority));
		}
		return permits;
	}

	private static void release(List<Permit> permits) {
		permits.forEach((permit) -> permit.release(Permit.Ending.ABANDONED));
	}

}
