package dev.ratelimit.redis;

import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.DefaultRedisScript;
import org.springframework.data.redis.core.script.RedisScript;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.support.ManualTimeSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * What one key costs in Redis memory, per algorithm, for a typical state: a
 * capacity of 100 after some requests, one every 10 ms. Prints
 * {@code MEMORY <algorithm> <bytes> (after <n> requests)} for the documentation; the
 * bounds catch a layout that grows by accident.
 */
class RedisMemoryUsageTests extends SharedRedisTests {

	/** SAMPLES 0: every element counted, not an estimate. */
	private static final RedisScript<Long> MEMORY_USAGE = new DefaultRedisScript<>(
			"return redis.call('MEMORY', 'USAGE', KEYS[1], 'SAMPLES', '0')", Long.class);

	static Stream<Arguments> states() {
		return Stream.of(arguments(Algorithm.TOKEN_BUCKET, 10, 200), arguments(Algorithm.LEAKY_BUCKET, 10, 200),
				arguments(Algorithm.LEAKY_BUCKET_SHAPING, 10, 200), arguments(Algorithm.FIXED_WINDOW, 10, 200),
				arguments(Algorithm.SLIDING_WINDOW_COUNTER, 10, 200),
				arguments(Algorithm.SLIDING_WINDOW_LOG, 10, 1_024),
				arguments(Algorithm.SLIDING_WINDOW_LOG, 100, 8_192));
	}

	@ParameterizedTest(name = "{0} after {1} requests")
	@MethodSource("states")
	void keyStaysSmall(Algorithm algorithm, int requests, long boundBytes) {
		RateLimitPolicy.Builder builder = RateLimitPolicy.builder("memory").algorithm(algorithm).capacity(100);
		RateLimitPolicy policy = algorithm.isRateBased() ? builder.refill("100/1m").build()
				: builder.window("1m").build();
		String key = new LimitKeys("rl", 128).build(policy.name(), "203.0.113.7");
		ManualTimeSource clock = new ManualTimeSource(BackendComparison.START_MICROS);
		RedisRateLimitBackend backend = new RedisRateLimitBackend(connectionFactory, clock);
		for (int i = 0; i < requests; i++) {
			assertThat(backend.tryConsume(policy, key, 1).allowed()).isTrue();
			clock.advanceMicros(10_000);
		}
		Long bytes = new StringRedisTemplate(connectionFactory).execute(MEMORY_USAGE, List.of(key));
		System.out.println("MEMORY " + algorithm.name().toLowerCase().replace('_', '-') + " " + bytes + " (after "
				+ requests + " requests)");
		assertThat(bytes).isPositive().isLessThan(boundBytes);
	}

}
