package dev.ratelimit.redis;

import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.ratelimit.core.RateLimitPolicy;

import static dev.ratelimit.core.Algorithm.FIXED_WINDOW;
import static dev.ratelimit.core.Algorithm.LEAKY_BUCKET;
import static dev.ratelimit.core.Algorithm.LEAKY_BUCKET_SHAPING;
import static dev.ratelimit.core.Algorithm.SLIDING_WINDOW_COUNTER;
import static dev.ratelimit.core.Algorithm.SLIDING_WINDOW_LOG;
import static dev.ratelimit.core.Algorithm.TOKEN_BUCKET;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * Every algorithm's script mirrors its Java class: long seeded random timelines
 * give the same decision, to the microsecond, from Redis, the in-memory backend
 * and the {@link dev.ratelimit.core.LimitState} model, and leave the stored
 * state and TTL each decision implies (see {@link BackendComparison}).
 * <p>
 * Rates and windows are chosen so that times fall between whole units (a
 * third of a second, 700 ms windows on a 100 ms grid) as well as on them.
 */
class ScriptConformanceTests extends ScriptTestSupport {

	private static final int STEPS = 500;

	static Stream<Arguments> timelines() {
		return Stream.of(
				arguments(bucket(TOKEN_BUCKET, 5, "3/1s"), 250 * MILLI, 1L),
				arguments(bucket(TOKEN_BUCKET, 4, "7/10s"), SECOND, 2L),
				arguments(bucket(LEAKY_BUCKET, 5, "3/1s"), 250 * MILLI, 3L),
				arguments(bucket(LEAKY_BUCKET, 4, "7/10s"), SECOND, 4L),
				arguments(bucket(LEAKY_BUCKET_SHAPING, 5, "2/1s"), 250 * MILLI, 5L),
				arguments(bucket(LEAKY_BUCKET_SHAPING, 4, "3/1s"), 250 * MILLI, 6L),
				arguments(window(FIXED_WINDOW, 5, "1s"), 250 * MILLI, 7L),
				arguments(window(FIXED_WINDOW, 7, "700ms"), 100 * MILLI, 8L),
				arguments(window(SLIDING_WINDOW_LOG, 5, "1s"), 250 * MILLI, 9L),
				arguments(window(SLIDING_WINDOW_LOG, 20, "3s"), 250 * MILLI, 10L),
				arguments(window(SLIDING_WINDOW_COUNTER, 5, "1s"), 250 * MILLI, 11L),
				arguments(window(SLIDING_WINDOW_COUNTER, 10, "700ms"), 100 * MILLI, 12L));
	}

	@ParameterizedTest(name = "{0} on a grid of {1}us")
	@MethodSource("timelines")
	void scriptAgreesWithJavaOverALongRandomTimeline(RateLimitPolicy policy, long stepMicros, long seed) {
		int allowed = this.backends.playRandom(policy, key(policy), stepMicros, STEPS, seed);
		// Both outcomes occur often, or the timeline would prove little.
		assertThat(allowed).as("allowed of %d", STEPS).isBetween(50, STEPS - 25);
	}

}
