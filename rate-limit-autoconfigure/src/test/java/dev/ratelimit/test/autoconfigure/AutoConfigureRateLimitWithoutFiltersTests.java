package dev.ratelimit.test.autoconfigure;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.servlet.MockMvc;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * {@code @AutoConfigureMockMvc(addFilters = false)} leaves the route rules'
 * filter out of MockMvc, while the annotations, enforced by the aspects, still
 * apply.
 */
@WebMvcTest
@AutoConfigureMockMvc(addFilters = false)
@AutoConfigureRateLimit
@TestPropertySource(locations = SliceTestApplication.PROPERTIES)
class AutoConfigureRateLimitWithoutFiltersTests {

	@Autowired
	MockMvc mvc;

	@Test
	void routeRuleIsNotAppliedButTheAnnotationIs() throws Exception {
		for (int i = 0; i < 5; i++) {
			this.mvc.perform(get("/api/items")).andExpect(status().isOk());
		}
		this.mvc.perform(post("/runs").header("X-User-Id", "ann")).andExpect(status().isOk());
		this.mvc.perform(post("/runs").header("X-User-Id", "ann")).andExpect(status().isOk());
		this.mvc.perform(post("/runs").header("X-User-Id", "ann")).andExpect(status().isTooManyRequests());
	}

}
