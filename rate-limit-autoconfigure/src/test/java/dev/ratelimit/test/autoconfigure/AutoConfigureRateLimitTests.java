package dev.ratelimit.test.autoconfigure;

import java.time.Duration;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.request.RequestPostProcessor;

import dev.ratelimit.support.ManualTimeSource;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * A {@code @WebMvcTest} slice with {@link AutoConfigureRateLimit} enforces the
 * application's limits as the running application does: an annotation on a
 * controller method, and a route rule in the filter MockMvc runs.
 */
@WebMvcTest
@AutoConfigureRateLimit
@TestPropertySource(locations = SliceTestApplication.PROPERTIES)
@Import(AutoConfigureRateLimitTests.Clock.class)
class AutoConfigureRateLimitTests {

	@Autowired
	MockMvc mvc;

	@Autowired
	ManualTimeSource clock;

	@BeforeEach
	void refillEverything() {
		// The slice's context, and so every bucket, is shared by the tests of this class.
		this.clock.advance(Duration.ofDays(1));
	}

	@Test
	void annotationLimitAnswers429AfterItsCapacity() throws Exception {
		this.mvc.perform(post("/runs").header("X-User-Id", "ann"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit", "\"runs\";r=1;t=1800"));
		this.mvc.perform(post("/runs").header("X-User-Id", "ann")).andExpect(status().isOk());
		this.mvc.perform(post("/runs").header("X-User-Id", "ann"))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "1800"))
			.andExpect(jsonPath("$['violated-policies']").value("runs"));
		this.mvc.perform(post("/runs").header("X-User-Id", "bob")).andExpect(status().isOk());
	}

	@Test
	void routeRuleAnswers429AfterItsCapacity() throws Exception {
		this.mvc.perform(get("/api/items")).andExpect(status().isOk());
		this.mvc.perform(get("/api/items")).andExpect(status().isOk());
		this.mvc.perform(get("/api/items"))
			.andExpect(status().isTooManyRequests())
			.andExpect(jsonPath("$['violated-policies']").value("per-ip"));
	}

	@Test
	void everyMockMvcRequestComesFrom127001UnlessItSetsItsRemoteAddress() throws Exception {
		this.mvc.perform(get("/api/items")).andExpect(status().isOk());
		this.mvc.perform(get("/api/items").with(remoteAddr("127.0.0.1"))).andExpect(status().isOk());
		this.mvc.perform(get("/api/items")).andExpect(status().isTooManyRequests());
		this.mvc.perform(get("/api/items").with(remoteAddr("192.0.2.10"))).andExpect(status().isOk());
		this.mvc.perform(get("/api/items").with(remoteAddr("192.0.2.11"))).andExpect(status().isOk());
	}

	private static RequestPostProcessor remoteAddr(String address) {
		return (request) -> {
			request.setRemoteAddr(address);
			return request;
		};
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Clock {

		@Bean
		ManualTimeSource clock() {
			return new ManualTimeSource();
		}

	}

}
