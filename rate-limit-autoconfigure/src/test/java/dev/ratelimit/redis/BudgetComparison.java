package dev.ratelimit.redis;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.BudgetState;
import dev.ratelimit.budget.BudgetStore;
import dev.ratelimit.budget.InMemoryBudgetStore;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs every budget operation against the in-memory store and the Redis store
 * on one manual clock, and checks that both agree with a model: the
 * {@link BudgetState} of each key, never forgotten, driven with the spans
 * {@link BudgetStore#spans} computes. A store that forgets a state too early
 * (or keeps one that changes decisions) disagrees with the model.
 * <p>
 * Redis expires keys on its own wall clock, which the manual clock does not
 * drive: after each operation every key is checked to carry a TTL (a key
 * without one would live forever) and is then made persistent, so that a slow
 * run cannot expire it early. The script brings a persistent state up to date
 * by comparing lease and marker expiries to the explicit time, so this changes
 * no decision. Timelines keep times on whole seconds, so no TTL is shorter than
 * a second.
 */
final class BudgetComparison {

	private final ManualTimeSource clock;

	private final BudgetStore memory;

	private final BudgetStore redisStore;

	private final StringRedisTemplate redis;

	private final Map<String, BudgetState> model = new HashMap<>();

	BudgetComparison(RedisConnectionFactory connectionFactory, Instant start) {
		this.clock = new ManualTimeSource(micros(start));
		this.memory = new InMemoryBudgetStore(this.clock, 10_000);
		this.redisStore = new RedisBudgetStore(connectionFactory, this.clock);
		this.redis = new StringRedisTemplate(connectionFactory);
	}

	static long micros(Instant instant) {
		return instant.getEpochSecond() * 1_000_000L + instant.getNano() / 1_000L;
	}

	long now() {
		return this.clock.currentTimeMicros();
	}

	void advance(Duration duration) {
		this.clock.advance(duration);
	}

	void moveTo(Instant instant) {
		long delta = micros(instant) - now();
		assertThat(delta).as("timeline goes forward to %s", instant).isGreaterThanOrEqualTo(0);
		this.clock.advanceMicros(delta);
	}

	StringRedisTemplate redis() {
		return this.redis;
	}

	BudgetDecision reserve(BudgetPolicy policy, String key, String id, long estimateMicros) {
		return compare("reserve " + id + " " + estimateMicros, policy, key,
				(state) -> state.reserve(policy, BudgetStore.spans(policy, now()), id, estimateMicros, now()),
				(store) -> store.reserve(policy, key, id, estimateMicros));
	}

	BudgetDecision settle(BudgetPolicy policy, String key, String id, long actualMicros) {
		return compare("settle " + id + " " + actualMicros, policy, key,
				(state) -> state.settle(policy, BudgetStore.spans(policy, now()), id, actualMicros, now()),
				(store) -> store.settle(policy, key, id, actualMicros));
	}

	BudgetDecision extend(BudgetPolicy policy, String key, String id, long moreMicros) {
		return compare("extend " + id + " " + moreMicros, policy, key,
				(state) -> state.extend(policy, BudgetStore.spans(policy, now()), id, moreMicros, now()),
				(store) -> store.extend(policy, key, id, moreMicros));
	}

	BudgetDecision release(BudgetPolicy policy, String key, String id) {
		return compare("release " + id, policy, key,
				(state) -> state.release(policy, BudgetStore.spans(policy, now()), id, now()),
				(store) -> store.release(policy, key, id));
	}

	BudgetDecision peek(BudgetPolicy policy, String key) {
		return compare("peek", policy, key, (state) -> state.peek(policy, BudgetStore.spans(policy, now()), now()),
				(store) -> store.peek(policy, key));
	}

	private BudgetDecision compare(String operation, BudgetPolicy policy, String key,
			Function<BudgetState, BudgetDecision> onModel, Function<BudgetStore, BudgetDecision> onStore) {
		String at = operation + " at " + Instant.ofEpochSecond(0, now() * 1_000L);
		BudgetDecision expected = onModel
			.apply(this.model.computeIfAbsent(key, (k) -> new BudgetState(policy.limits().size())));
		BudgetDecision fromRedis = onStore.apply(this.redisStore);
		assertThat(fromRedis).as("Redis store: %s", at).isEqualTo(expected);
		persistKeys(key, at);
		BudgetDecision fromMemory = onStore.apply(this.memory);
		assertThat(fromMemory).as("in-memory store: %s", at).isEqualTo(expected);
		return expected;
	}

	private void persistKeys(String key, String at) {
		for (String redisKey : RedisBudgetStore.redisKeys(key)) {
			Long ttl = this.redis.getExpire(redisKey, TimeUnit.MILLISECONDS);
			assertThat(ttl).as("TTL of %s after %s", redisKey, at).isNotNull().isNotEqualTo(-1L);
			if (ttl != -2L) {
				assertThat(this.redis.persist(redisKey)).isTrue();
			}
		}
	}

	/**
	 * Returns a decision of a one-limit budget, for readable expectations.
	 */
	static BudgetDecision one(boolean allowed, long spent, long reserved, long remaining, long resetAfter,
			long retryAfter) {
		return new BudgetDecision(allowed, new long[] { spent }, reserved, new long[] { remaining },
				new long[] { resetAfter }, new boolean[] { !allowed }, retryAfter);
	}

}
