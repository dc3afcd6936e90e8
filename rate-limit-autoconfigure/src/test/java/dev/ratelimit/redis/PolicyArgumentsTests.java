package dev.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
				List<String> text = text(args, 2);
				assertThat(text.get(0)).isEqualTo(code(policy.algorithm()));
				assertThat(text.subList(1, text.size()))
					.containsExactly(formattedPerCall(policy, 1 + pass).toArray(String[]::new));
				byte[] tokenBucket = this.arguments.of(policy).tokenBucket();
				if (policy.algorithm() == Algorithm.TOKEN_BUCKET) {
					// decide_token_bucket.lua's one argument: decide.lua's capacity, a, b and max wait.
					assertThat(new String(tokenBucket, StandardCharsets.US_ASCII))
						.isEqualTo(String.join(" ", text.get(1), text.get(2), text.get(3), text.get(5)));
				}
				else {
					assertThat(tokenBucket).isNull();
				}
			}
		}
	}

	@Test
	void everyAlgorithmHasItsOwnCodeAndTheScriptsKnowEachOne() {
		Set<String> registered = new HashSet<>();
		Matcher registration = Pattern.compile("ALGORITHMS\\['(\\w+)'\\] = ").matcher(LuaScripts.library());
		while (registration.find()) {
			registered.add(registration.group(1));
		}
		Set<String> codes = new HashSet<>();
		for (Algorithm algorithm : Algorithm.values()) {
			codes.add(code(algorithm));
		}
		// Which code is whose is what the script conformance suites check, deciding with each algorithm.
		assertThat(codes).hasSize(Algorithm.values().length).isEqualTo(registered);
	}

	private String code(Algorithm algorithm) {
		RateLimitPolicy.Builder builder = RateLimitPolicy.builder("code").algorithm(algorithm).capacity(1);
		RateLimitPolicy policy = algorithm.isRateBased() ? builder.refill("1/1s").build() : builder.window("1s").build();
		return new String(this.arguments.of(policy).code(), StandardCharsets.UTF_8);
	}

	@Test
	void digitsOfAnyWholeNumberAreItsDecimalText() {
		for (long value : new long[] { 0, 1, 255, 256, 1_000_000_007L, Long.MAX_VALUE, -1, Long.MIN_VALUE }) {
			assertThat(new String(PolicyArguments.digits(value), StandardCharsets.US_ASCII))
				.isEqualTo(Long.toString(value));
		}
	}

	/**
	 * The numbers as RedisRateLimitBackend formatted them for every call before,
	 * after the algorithm's code.
	 */
	private static List<String> formattedPerCall(RateLimitPolicy policy, long cost) {
		boolean rateBased = policy.algorithm().isRateBased();
		return List.of(Long.toString(policy.capacity()),
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
