package dev.ratelimit.redis;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.ZSetOperations.TypedTuple;

import dev.ratelimit.core.Acquisition;
import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.LimitState;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.memory.InMemoryRateLimitBackend;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Makes the same decisions with the in-memory backend and the Redis backend on
 * one manual clock, and checks that both agree with a model: the
 * {@link LimitState} of each key, never dropped, driven exactly as
 * {@code InMemoryRateLimitBackend} drives it (all or nothing for layered
 * decisions). It also checks that Redis holds exactly the state each decision
 * implies: no key when the state equals a fresh one, otherwise a TTL of the
 * reset time rounded up to milliseconds; a decision that took nothing wrote
 * nothing.
 * <p>
 * Redis expires keys on its own wall clock, which the manual clock does not
 * drive: once the TTL is checked the key is made persistent, so that a slow
 * test run cannot expire it early. A persistent key is still brought up to
 * date by the script as time passes, so this changes no decision. Timelines
 * keep every TTL far above the few milliseconds between a decision and its
 * check.
 */
final class BackendComparison {

	/** 2026-01-01T00:00:00Z: realistic times are near 2^51 microseconds. */
	static final long START_MICROS = 1_767_225_600_000_000L;

	private static final long NO_KEY = -2;

	private static final long NO_TTL = -1;

	private final ManualTimeSource clock = new ManualTimeSource(START_MICROS);

	private final RateLimitBackend memory = new InMemoryRateLimitBackend(this.clock, 10_000);

	private final RateLimitBackend redisBackend;

	private final StringRedisTemplate redis;

	private final Map<String, LimitState> model = new HashMap<>();

	private final Map<String, Long> checkedTtls = new HashMap<>();

	private long offsetMicros;

	BackendComparison(RedisConnectionFactory connectionFactory) {
		this(connectionFactory, connectionFactory);
	}

	/**
	 * Creates a comparison whose Redis backend uses one factory and whose checks
	 * use another, for backends built on a wrapped factory.
	 * @param backendFactory the factory of the backend under test
	 * @param checkFactory the factory the checks read Redis with
	 */
	BackendComparison(RedisConnectionFactory backendFactory, RedisConnectionFactory checkFactory) {
		this.redisBackend = new RedisRateLimitBackend(backendFactory, this.clock);
		this.redis = new StringRedisTemplate(checkFactory);
	}

	/**
	 * Plays a timeline, asserting each decision of both backends.
	 * @param policy the policy
	 * @param key the storage key
	 * @param steps the timeline, in time order
	 */
	void play(RateLimitPolicy policy, String key, Step... steps) {
		for (int i = 0; i < steps.length; i++) {
			Step step = steps[i];
			Decision decision = decideAt(step.atMicros(), policy, key, step.cost());
			assertThat(decision).as("step %d at %dus, cost %d", i, step.atMicros(), step.cost())
				.isEqualTo(step.expected(policy));
		}
	}

	/**
	 * Moves the clock to {@code atMicros} after the start and decides with both
	 * backends, asserting that they agree with the model.
	 * @param atMicros the time since the start, never earlier than the last one
	 * @param policy the policy
	 * @param key the storage key
	 * @param cost the cost
	 * @return the decision both backends made
	 */
	Decision decideAt(long atMicros, RateLimitPolicy policy, String key, long cost) {
		long now = moveTo(atMicros);
		Decision expected = state(policy, key, now).decide(policy, cost, now, true);
		long startNanos = System.nanoTime();
		Decision redisDecision = this.redisBackend.tryConsume(policy, key, cost);
		assertThat(redisDecision).as("Redis backend at %dus, cost %d", atMicros, cost).isEqualTo(expected);
		assertStoredState(policy, key, redisDecision, redisDecision.allowed(), false, startNanos, now);
		Decision memoryDecision = this.memory.tryConsume(policy, key, cost);
		assertThat(memoryDecision).as("in-memory backend at %dus, cost %d", atMicros, cost).isEqualTo(expected);
		return expected;
	}

	/**
	 * Decides several policies for one call with both backends, asserting that
	 * they agree with the model's all-or-nothing decision. Keys that took nothing
	 * may have been refunded (a decision across cluster slots), so their TTL is
	 * checked when they have one.
	 * @param atMicros the time since the start, never earlier than the last one
	 * @param acquisitions the policies, keys and costs
	 * @return the decisions both backends made
	 */
	List<Decision> decideAllAt(long atMicros, List<Acquisition> acquisitions) {
		long now = moveTo(atMicros);
		List<Decision> expected = new ArrayList<>();
		boolean allAllowed = true;
		for (Acquisition acquisition : acquisitions) {
			Decision decision = state(acquisition.policy(), acquisition.key(), now).decide(acquisition.policy(),
					acquisition.cost(), now, false);
			expected.add(decision);
			allAllowed &= decision.allowed();
		}
		for (int i = 0; i < expected.size(); i++) {
			Acquisition acquisition = acquisitions.get(i);
			LimitState state = this.model.get(acquisition.key());
			if (allAllowed) {
				expected.set(i, state.decide(acquisition.policy(), acquisition.cost(), now, true));
			}
			else if (expected.get(i).allowed()) {
				expected.set(i, state.decide(acquisition.policy(), 0, now, false));
			}
		}
		long startNanos = System.nanoTime();
		List<Decision> redisDecisions = this.redisBackend.tryConsumeAll(acquisitions);
		assertThat(redisDecisions).as("Redis backend at %dus: %s", atMicros, acquisitions).isEqualTo(expected);
		for (int i = 0; i < acquisitions.size(); i++) {
			Acquisition acquisition = acquisitions.get(i);
			assertStoredState(acquisition.policy(), acquisition.key(), expected.get(i), allAllowed, true,
					startNanos, now);
		}
		List<Decision> memoryDecisions = this.memory.tryConsumeAll(acquisitions);
		assertThat(memoryDecisions).as("in-memory backend at %dus: %s", atMicros, acquisitions).isEqualTo(expected);
		return expected;
	}

	/**
	 * Plays a seeded random timeline of single decisions on one key: times on a
	 * grid of {@code stepMicros}, costs mostly 1, sometimes anything from 0 to the
	 * capacity.
	 * @param policy the policy
	 * @param key the storage key
	 * @param stepMicros the grid
	 * @param steps the number of decisions
	 * @param seed the seed
	 * @return the number of decisions allowed
	 */
	int playRandom(RateLimitPolicy policy, String key, long stepMicros, int steps, long seed) {
		Random random = new Random(seed);
		long at = this.offsetMicros;
		int allowed = 0;
		for (int i = 0; i < steps; i++) {
			at += random.nextInt(4) * stepMicros;
			if (decideAt(at, policy, key, randomCost(random, policy)).allowed()) {
				allowed++;
			}
		}
		return allowed;
	}

	/**
	 * Plays a seeded random timeline of layered decisions: each call takes a
	 * random non-empty subset of the acquisitions' policies, with random costs.
	 * @param acquisitions the policies and keys to choose from (costs ignored)
	 * @param stepMicros the grid
	 * @param steps the number of decisions
	 * @param seed the seed
	 * @return the number of calls allowed
	 */
	int playRandomLayered(List<Acquisition> acquisitions, long stepMicros, int steps, long seed) {
		Random random = new Random(seed);
		long at = this.offsetMicros;
		int allowed = 0;
		for (int i = 0; i < steps; i++) {
			at += random.nextInt(3) * stepMicros;
			List<Acquisition> call = new ArrayList<>();
			for (Acquisition acquisition : acquisitions) {
				if (random.nextInt(3) != 0) {
					call.add(new Acquisition(acquisition.policy(), acquisition.key(),
							randomCost(random, acquisition.policy())));
				}
			}
			if (call.isEmpty()) {
				call.add(acquisitions.get(0));
			}
			if (decideAllAt(at, call).stream().allMatch(Decision::allowed)) {
				allowed++;
			}
		}
		return allowed;
	}

	private static long randomCost(Random random, RateLimitPolicy policy) {
		return (random.nextInt(4) == 0) ? random.nextInt((int) policy.capacity() + 1) : 1;
	}

	/**
	 * Removes the key as Redis does when its TTL fires.
	 * @param key the storage key
	 */
	void expire(String key) {
		assertThat(this.redis.delete(key)).as("key %s existed", key).isTrue();
	}

	/**
	 * Returns the numbers of a state stored as one string of whole numbers
	 * separated by spaces: {@code "a b"} for the buckets (token bucket: scaled
	 * tokens and time; leaky bucket: scaled level and time; shaping leaky bucket:
	 * drain time and remainder), {@code "s e l n"} for a fixed window (start,
	 * end, last count, count), {@code "s e l n ps pn"} for a sliding window
	 * counter (the same, then the previous window's start and count).
	 * @param key the storage key
	 * @return the numbers as stored, or {@code null} when the key is missing
	 */
	@Nullable List<String> storedNumbers(String key) {
		String value = this.redis.opsForValue().get(key);
		return (value != null) ? List.of(value.split(" ", -1)) : null;
	}

	/**
	 * Returns the TTL the key had when it was last checked.
	 * @param key the storage key
	 * @return the TTL in milliseconds, {@code -2} when the key was missing, {@code -1} when it had none
	 */
	long checkedTtlMillis(String key) {
		return this.checkedTtls.get(key);
	}

	/**
	 * Returns the template the checks use.
	 * @return the template
	 */
	StringRedisTemplate redis() {
		return this.redis;
	}

	/**
	 * Returns the time the clock shows, as an offset from the start.
	 * @return the offset in microseconds
	 */
	long offsetMicros() {
		return this.offsetMicros;
	}

	private long moveTo(long atMicros) {
		assertThat(atMicros).as("timeline goes forward").isGreaterThanOrEqualTo(this.offsetMicros);
		this.clock.advanceMicros(atMicros - this.offsetMicros);
		this.offsetMicros = atMicros;
		return this.clock.currentTimeMicros();
	}

	private LimitState state(RateLimitPolicy policy, String key, long now) {
		return this.model.computeIfAbsent(key, (k) -> LimitState.create(policy, now));
	}

	/**
	 * Checks the key after a decision: a taken cost wrote the state with a TTL of
	 * the reset time (or deleted a fresh state); otherwise nothing was written,
	 * unless {@code refundable} and a refund rewrote it the same way.
	 */
	private void assertStoredState(RateLimitPolicy policy, String key, Decision decision, boolean taken,
			boolean refundable, long startNanos, long now) {
		long ttlMillis = -Math.floorDiv(-decision.resetAfterMicros(), 1_000L);
		Long remainingMillis = this.redis.getExpire(key, TimeUnit.MILLISECONDS);
		this.checkedTtls.put(key, remainingMillis);
		if (decision.resetAfterMicros() == 0) {
			// A state equal to a fresh one is deleted when written, and may linger (persisted) when not.
			assertThat(remainingMillis).as("%s for a fresh state", key)
				.isIn(taken ? List.of(NO_KEY) : List.of(NO_KEY, NO_TTL));
			return;
		}
		if (!taken && (!refundable || remainingMillis == NO_TTL)) {
			assertThat(remainingMillis).as("%s untouched by a decision that took nothing", key).isEqualTo(NO_TTL);
			return;
		}
		// Redis counts down in real time from the moment the script ran.
		long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos) + 1;
		assertThat(remainingMillis).as("PTTL of %s for reset after %dus", key, decision.resetAfterMicros())
			.isBetween(ttlMillis - elapsedMillis, ttlMillis);
		if (policy.algorithm() == Algorithm.SLIDING_WINDOW_LOG) {
			assertLogIsConsistent(policy, key, now);
		}
		assertThat(this.redis.persist(key)).isTrue();
	}

	/**
	 * After a write, the log holds only entries inside the window, each with a
	 * distinct member, and its running sum is their total cost.
	 */
	private void assertLogIsConsistent(RateLimitPolicy policy, String key, long now) {
		Set<TypedTuple<String>> entries = this.redis.opsForZSet().rangeWithScores(key, 0, -1);
		long sum = 0;
		Double storedSum = null;
		for (TypedTuple<String> entry : entries) {
			if (entry.getValue().equals("s")) {
				storedSum = entry.getScore();
				continue;
			}
			String[] parts = entry.getValue().split(":");
			assertThat(parts).as("member %s", entry.getValue()).hasSize(3);
			assertThat(Long.parseLong(parts[0])).as("member %s matches its score", entry.getValue())
				.isEqualTo(entry.getScore().longValue());
			assertThat(entry.getScore().longValue()).as("entry %s inside the window", entry.getValue())
				.isGreaterThan(now - policy.windowMicros());
			sum += Long.parseLong(parts[2]);
		}
		assertThat(storedSum).as("running sum of %s", key).isEqualTo((double) -sum);
	}

	/**
	 * One request of a timeline and the decision expected for it.
	 *
	 * @param atMicros time since the start
	 * @param cost the cost
	 * @param allowed whether it is allowed
	 * @param remaining the quota left
	 * @param retryAfterMicros the expected retry-after
	 * @param resetAfterMicros the expected reset-after
	 * @param delayMicros the expected delay (shaping only)
	 */
	record Step(long atMicros, long cost, boolean allowed, long remaining, long retryAfterMicros,
			long resetAfterMicros, long delayMicros) {

		static Step step(long atMicros, long cost, boolean allowed, long remaining, long retryAfterMicros,
				long resetAfterMicros) {
			return new Step(atMicros, cost, allowed, remaining, retryAfterMicros, resetAfterMicros, 0);
		}

		/** An allowed step of the shaping leaky bucket, which waits {@code delayMicros} for its turn. */
		static Step queued(long atMicros, long cost, long remaining, long resetAfterMicros, long delayMicros) {
			return new Step(atMicros, cost, true, remaining, 0, resetAfterMicros, delayMicros);
		}

		Decision expected(RateLimitPolicy policy) {
			return new Decision(this.allowed, this.remaining, policy.capacity(), this.resetAfterMicros,
					this.retryAfterMicros, this.delayMicros);
		}

	}

}
