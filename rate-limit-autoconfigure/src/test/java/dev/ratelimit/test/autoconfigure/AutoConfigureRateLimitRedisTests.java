package dev.ratelimit.test.autoconfigure;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.servlet.MockMvc;

import dev.ratelimit.support.RedisServerFixture;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * An application on the Redis backend keeps it in a slice with
 * {@link AutoConfigureRateLimit}: the annotation brings Spring Data Redis's
 * auto-configuration, which a {@code @WebMvcTest} leaves out.
 */
// The deny cache answers a denied key in this instance, out of Redis's reach: off, so that a flush resets.
@WebMvcTest(properties = { "rate-limit.backend=redis", "rate-limit.redis.deny-cache.enabled=false" })
@AutoConfigureRateLimit
@TestPropertySource(locations = SliceTestApplication.PROPERTIES)
class AutoConfigureRateLimitRedisTests {

	private static final RedisServerFixture redis = RedisServerFixture.shared();

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		redis.register(registry);
	}

	@Autowired
	MockMvc mvc;

	@BeforeEach
	void emptyRedis() {
		// Redis keeps its own time: a clock bean cannot refill its buckets, emptying it can.
		redis.flushAll();
	}

	@Test
	void annotationLimitIsEnforcedInRedis() throws Exception {
		this.mvc.perform(post("/runs").header("X-User-Id", "ann")).andExpect(status().isOk());
		this.mvc.perform(post("/runs").header("X-User-Id", "ann")).andExpect(status().isOk());
		this.mvc.perform(post("/runs").header("X-User-Id", "ann")).andExpect(status().isTooManyRequests());
		redis.flushAll();
		this.mvc.perform(post("/runs").header("X-User-Id", "ann")).andExpect(status().isOk());
	}

}
