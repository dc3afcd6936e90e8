package dev.ratelimit.test.autoconfigure;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.context.TestPropertySource;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * {@code rate-limit.enabled=false} turns the limits off in a slice with
 * {@link AutoConfigureRateLimit}, as in the application.
 */
@WebMvcTest(properties = "rate-limit.enabled=false")
@AutoConfigureRateLimit
@TestPropertySource(locations = SliceTestApplication.PROPERTIES)
class AutoConfigureRateLimitDisabledTests {

	@Autowired
	MockMvc mvc;

	@Test
	void limitsAreOff() throws Exception {
		for (int i = 0; i < 5; i++) {
			this.mvc.perform(post("/runs").header("X-User-Id", "ann")).andExpect(status().isOk());
			this.mvc.perform(get("/api/items")).andExpect(status().isOk());
		}
	}

}
