package dev.ratelimit.test.autoconfigure;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.context.ApplicationContext;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.servlet.MockMvc;

import dev.ratelimit.core.RateLimiter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * What a {@code @WebMvcTest} slice does without {@link AutoConfigureRateLimit}:
 * the limiter's auto-configuration is not among the slice's, so the same
 * application's limits are not enforced at all.
 */
@WebMvcTest
@TestPropertySource(locations = SliceTestApplication.PROPERTIES)
class WebMvcTestWithoutRateLimitTests {

	@Autowired
	MockMvc mvc;

	@Autowired
	ApplicationContext context;

	@Test
	void sliceHasNoLimiter() {
		assertThat(this.context.getBeanNamesForType(RateLimiter.class)).isEmpty();
	}

	@Test
	void annotationLimitIsIgnored() throws Exception {
		for (int i = 0; i < 5; i++) {
			this.mvc.perform(post("/runs").header("X-User-Id", "ann"))
				.andExpect(status().isOk())
				.andExpect(header().doesNotExist("RateLimit"));
		}
	}

	@Test
	void routeRuleIsIgnored() throws Exception {
		for (int i = 0; i < 5; i++) {
			this.mvc.perform(get("/api/items")).andExpect(status().isOk());
		}
	}

}
