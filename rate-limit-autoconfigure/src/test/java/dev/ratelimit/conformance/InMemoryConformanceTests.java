package dev.ratelimit.conformance;

import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.memory.InMemoryRateLimitBackend;
import dev.ratelimit.support.ManualTimeSource;

/**
 * The conformance table on the in-memory backend.
 */
class InMemoryConformanceTests extends ConformanceTests {

	@Override
	RateLimitBackend backend(ManualTimeSource clock) {
		return new InMemoryRateLimitBackend(clock, 1_000);
	}

}
