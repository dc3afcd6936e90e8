package dev.ratelimit.memory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import dev.ratelimit.core.LimitListener;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.KeyBound;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.LimitRequest;
import dev.ratelimit.core.RateLimitBackendUnavailableException;
import dev.ratelimit.core.RateLimitOutcome;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.core.Sleeper;
import dev.ratelimit.core.TooManyKeysException;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The attack on a bounded in-memory store: an exhausted caller (or anyone
 * else) sends requests with ever new keys, hoping that making room for them
 * evicts its own exhausted state, or somebody else's. Whatever the algorithm,
 * a key whose state still matters is never forgotten: at the bound, new keys
 * are refused and get their policy's failure mode, and each policy has a bound
 * of its own.
 */
class KeyFloodTests {

	private static final int BOUND = 100;

	private static final int FLOOD = 10_000;

	private final ManualTimeSource clock = new ManualTimeSource();

	private final KeyBound bound = new KeyBound(BOUND);

	private final InMemoryRateLimitBackend backend = new InMemoryRateLimitBackend(this.clock, this.bound);

	static Stream<RateLimitPolicy> everyAlgorithm() {
		return Stream.of(bucket(Algorithm.TOKEN_BUCKET), bucket(Algorithm.LEAKY_BUCKET),
				bucket(Algorithm.LEAKY_BUCKET_SHAPING), window(Algorithm.FIXED_WINDOW),
				window(Algorithm.SLIDING_WINDOW_LOG), window(Algorithm.SLIDING_WINDOW_COUNTER));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("everyAlgorithm")
	void aFloodOfFreshKeysNeverLetsAnExhaustedKeyPassEarly(RateLimitPolicy policy) {
		exhaust(policy, "victim");
		int refused = 0;
		for (int i = 0; i < FLOOD; i++) {
			this.clock.advanceMicros(1);
			try {
				this.backend.tryConsume(policy, "fresh-" + i, 1);
			}
			catch (TooManyKeysException ex) {
				refused++;
			}
			if (i % 1_000 == 0) {
				assertThat(this.backend.tryConsume(policy, "victim", 1).allowed()).as("victim after %d fresh keys", i)
					.isFalse();
			}
		}
		assertThat(this.backend.tryConsume(policy, "victim", 1).allowed()).isFalse();
		assertThat(refused).isEqualTo(FLOOD - (BOUND - 1));
		assertThat(this.bound.refused()).isEqualTo(refused);
		assertThat(this.bound.of(policy.name()).count()).isEqualTo(BOUND);
	}

	@Test
	void oneFloodedPolicyNeitherEvictsNorCrowdsOutAnother() {
		RateLimitPolicy perUser = RateLimitPolicy.builder("per-user").capacity(2).refill("1/1h").build();
		RateLimitPolicy perIp = RateLimitPolicy.builder("per-ip").capacity(2).refill("1/1h").build();
		exhaust(perIp, "203.0.113.7");
		for (int i = 0; i < FLOOD; i++) {
			this.clock.advanceMicros(1);
			try {
				this.backend.tryConsume(perUser, "user-" + i, 1);
			}
			catch (TooManyKeysException ex) {
				assertThat(ex.getPolicy()).isEqualTo("per-user");
			}
		}
		assertThat(this.backend.tryConsume(perIp, "203.0.113.7", 1).allowed()).isFalse();
		// per-ip has a bound of its own: new addresses are still tracked.
		assertThat(this.backend.tryConsume(perIp, "198.51.100.1", 1).allowed()).isTrue();
		assertThat(this.bound.of("per-ip").count()).isEqualTo(2);
	}

	@Test
	void keysThatAreFreshAgainMakeRoomAtTheNextSweep() {
		RateLimitPolicy policy = RateLimitPolicy.builder("p").capacity(2).refill("2/1s").build();
		for (int i = 0; i < BOUND; i++) {
			this.backend.tryConsume(policy, "k" + i, 2);
		}
		assertThatExceptionOfType(TooManyKeysException.class)
			.isThrownBy(() -> this.backend.tryConsume(policy, "newcomer", 1));
		// After 1 s every bucket is full again: forgetting them changes nothing.
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(this.backend.tryConsume(policy, "newcomer", 1).allowed()).isTrue();
		assertThat(this.bound.dropped()).isEqualTo(BOUND);
		assertThat(this.backend.size()).isEqualTo(1);
	}

	@Test
	void atTheBoundAFailOpenPolicyLetsNewCallersThroughAndAFailClosedOneRefusesThem() {
		RateLimitPolicy open = RateLimitPolicy.builder("open")
			.capacity(1)
			.refill("1/1h")
			.failureMode(FailureMode.OPEN)
			.build();
		// The default, local: the full store is the only in-memory one, so it lets newcomers through like open.
		RateLimitPolicy local = RateLimitPolicy.builder("local").capacity(1).refill("1/1h").build();
		RateLimitPolicy closed = RateLimitPolicy.builder("closed")
			.capacity(1)
			.refill("1/1h")
			.failureMode(FailureMode.CLOSED)
			.build();
		List<String> failedOver = new ArrayList<>();
		RateLimiter limiter = new RateLimiter(this.backend, new LimitKeys("rl", 128), Sleeper.system(), null,
				new LimitListener() {

					@Override
					public void fellBack(Limit limit, FailureMode mode, RuntimeException cause) {
						failedOver.add(limit.name() + ":" + mode + ":" + cause.getClass().getSimpleName());
					}

					@Override
					public void storeAvailabilityChanged(LimitKind kind, boolean available, RuntimeException cause) {
						throw new AssertionError("a full store is no outage");
					}

				});
		for (int i = 0; i < BOUND; i++) {
			limiter.tryAcquire(List.of(new LimitRequest(open, "u" + i, 1), new LimitRequest(closed, "u" + i, 1),
					new LimitRequest(local, "u" + i, 1)));
		}

		// A known caller is still decided by its state: exhausted.
		RateLimitOutcome known = limiter.tryAcquire(List.of(new LimitRequest(open, "u0", 1)));
		assertThat(known.allowed()).isFalse();
		// A new caller of the open policy passes unchecked, and is counted as such.
		RateLimitOutcome newcomer = limiter.tryAcquire(List.of(new LimitRequest(open, "new", 1)));
		assertThat(newcomer.allowed()).isTrue();
		assertThat(newcomer.decisions()).isEmpty();
		assertThat(failedOver).containsExactly("open:OPEN:TooManyKeysException");
		assertThat(limiter.tryAcquire(List.of(new LimitRequest(local, "new", 1))).allowed()).isTrue();
		assertThat(failedOver).endsWith("local:OPEN:TooManyKeysException");
		// A new caller of the closed policy is refused as the store cannot decide for it.
		assertThatExceptionOfType(RateLimitBackendUnavailableException.class)
			.isThrownBy(() -> limiter.tryAcquire(List.of(new LimitRequest(closed, "new", 1))));
		assertThat(this.bound.refused()).isEqualTo(3);
	}

	@Test
	void aLayeredCallSkipsOnlyThePolicyThatCannotTrackTheCaller() {
		RateLimitPolicy full = RateLimitPolicy.builder("full").capacity(1).refill("1/1h").build();
		RateLimitPolicy roomy = RateLimitPolicy.builder("roomy").capacity(1).refill("1/1h").build();
		RateLimiter limiter = new RateLimiter(this.backend, new LimitKeys("rl", 128));
		for (int i = 0; i < BOUND; i++) {
			limiter.tryAcquire(List.of(new LimitRequest(full, "u" + i, 1)));
		}
		RateLimitOutcome first = limiter
			.tryAcquire(List.of(new LimitRequest(full, "new", 1), new LimitRequest(roomy, "new", 1)));
		assertThat(first.allowed()).isTrue();
		assertThat(first.decisions()).extracting((pd) -> pd.policy().name()).containsExactly("roomy");
		// roomy was charged and still limits the caller.
		RateLimitOutcome second = limiter
			.tryAcquire(List.of(new LimitRequest(full, "new", 1), new LimitRequest(roomy, "new", 1)));
		assertThat(second.allowed()).isFalse();
		assertThat(second.violatedPolicies()).containsExactly("roomy");
	}

	/** Takes from a key until it is refused; the shaping bucket refuses once its queue is full. */
	private void exhaust(RateLimitPolicy policy, String key) {
		for (int i = 0; i < 10; i++) {
			Decision decision = this.backend.tryConsume(policy, key, 1);
			if (!decision.allowed()) {
				return;
			}
		}
		throw new AssertionError(policy.name() + " never refused " + key);
	}

	private static RateLimitPolicy bucket(Algorithm algorithm) {
		return RateLimitPolicy.builder(algorithm.name().toLowerCase().replace('_', '-'))
			.algorithm(algorithm)
			.capacity(2)
			.refill("1/1h")
			.build();
	}

	private static RateLimitPolicy window(Algorithm algorithm) {
		return RateLimitPolicy.builder(algorithm.name().toLowerCase().replace('_', '-'))
			.algorithm(algorithm)
			.capacity(2)
			.window("1h")
			.build();
	}

}
