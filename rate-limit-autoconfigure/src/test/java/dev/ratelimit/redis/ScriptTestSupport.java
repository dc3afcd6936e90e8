package dev.ratelimit.redis;

import org.junit.jupiter.api.BeforeEach;

import dev.ratelimit.core.Algorithm;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.RateLimitPolicy;

/**
 * Shared set-up of the tests that replay timelines against the Lua scripts on
 * the shared {@code redis-server}: a clean server and a fresh
 * {@link BackendComparison} for every test.
 */
abstract class ScriptTestSupport extends SharedRedisTests {

	static final long MILLI = 1_000L;

	static final long SECOND = 1_000_000L;

	final LimitKeys keys = new LimitKeys("rl", 128);

	BackendComparison backends;

	@BeforeEach
	void setUpBackends() {
		this.backends = new BackendComparison(connectionFactory);
	}

	String key(RateLimitPolicy policy) {
		return this.keys.build(policy.name(), "user-42");
	}

	static RateLimitPolicy bucket(Algorithm algorithm, long capacity, String refill) {
		return RateLimitPolicy.builder("script").algorithm(algorithm).capacity(capacity).refill(refill).build();
	}

	static RateLimitPolicy window(Algorithm algorithm, long capacity, String window) {
		return RateLimitPolicy.builder("script").algorithm(algorithm).capacity(capacity).window(window).build();
	}

}
