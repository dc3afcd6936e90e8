package dev.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.RateLimitPolicy;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The policies' script arguments encoded once: the same text the scripts read
 * when they were formatted per call, for every policy however many share the
 * cache's slots.
 */
class PolicyArgumentsTests {

	private final PolicyArguments arguments = new PolicyArguments();

	@Test
	void everyPolicyGetsItsOwnArgumentsWhenMoreThanTheSlotsTakeTurns() {
		List<RateLimitPolicy> policies = new ArrayList<>();
		for (int i = 0; i < 300; i++) {
			Algorithm algorithm = Algorithm.values()[i % Algorithm.values().length];
			RateLimitPolicy.Builder builder = RateLimitPolicy.builder("p" + i).algorithm(algorithm).capacity(1 + i);
			builder = algorithm.isRateBased() ? builder.refill((1 + i) + "/" + (1 + i % 7) + "s")
					: builder.windowMicros(1_000_000L * (1 + i));
			if (algorithm == Algorithm.TOKEN_BUCKET) {
				builder.maxWaitMicros(1_000L * i);
			}
			policies.add(builder.build());
		}
		// Three passes over 300 policies in 64 slots: hits, misses and overwritten slots alike.
		for (int pass = 0; pass < 3; pass++) {
			for (RateLimitPolicy policy : policies) {
				byte[][] args = new byte[8][];
				int end = this.arguments.of(policy).put(args, 2, 1 + pass);
				assertThat(end).isEqualTo(8);
				assertThat(text(args, 2)).containsExactly(formattedPerCall(policy, 1 + pass).toArray(String[]::new));
			}
		}
	}

	@Test
	void digitsOfAnyWholeNumberAreItsDecimalText() {
		for (long value : new long[] { 0, 1, 255, 256, 1_000_000_007L, Long.MAX_VALUE, -1, Long.MIN_VALUE }) {
			assertThat(new String(PolicyArguments.digits(value), StandardCharsets.US_ASCII))
				.isEqualTo(Long.toString(value));
		}
	}

	/** The arguments as RedisRateLimitBackend formatted them for every call before. */
	private static List<String> formattedPerCall(RateLimitPolicy policy, long cost) {
		String code = switch (policy.algorithm()) {
			case TOKEN_BUCKET -> "tb";
			case LEAKY_BUCKET -> "lb";
			case LEAKY_BUCKET_SHAPING -> "ls";
			case FIXED_WINDOW -> "fw";
			case SLIDING_WINDOW_LOG -> "sl";
			case SLIDING_WINDOW_COUNTER -> "sc";
		};
		boolean rateBased = policy.algorithm().isRateBased();
		return List.of(code, Long.toString(policy.capacity()),
				Long.toString(rateBased ? policy.refill().tokens() : policy.windowMicros()),
				rateBased ? Long.toString(policy.refill().periodMicros()) : "0", Long.toString(cost),
				Long.toString(policy.maxWaitMicros()));
	}

	private static List<String> text(byte[][] args, int from) {
		List<String> text = new ArrayList<>();
		for (int i = from; i < args.length; i++) {
			text.add(new String(args[i], StandardCharsets.UTF_8));
		}
		return text;
	}

}
