package dev.ratelimit.test.autoconfigure;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.servlet.MockMvc;

import dev.ratelimit.core.TimeSource;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.delete;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The recipes of docs/testing.md, as written there: a clock the test moves,
 * the endpoint's reset allowed in the test only, and a test that names its
 * client through a trusted proxy's header.
 */
@SpringBootTest(classes = SliceTestApplication.class,
		properties = { "management.endpoints.web.exposure.include=ratelimits",
				"management.endpoint.ratelimits.access=unrestricted",
				"rate-limit.client-ip.trusted-proxies=127.0.0.1/32" })
@AutoConfigureMockMvc
@TestPropertySource(locations = SliceTestApplication.PROPERTIES)
@Import(TestingRecipeTests.TestClock.class)
class TestingRecipeTests {

	@Autowired
	MockMvc mvc;

	@Autowired
	AtomicLong now;

	@Test
	void movingTheClockRefillsTheBuckets() throws Exception {
		exhaust("clock");
		this.now.addAndGet(TimeUnit.DAYS.toMicros(1));
		this.mvc.perform(post("/runs").header("X-User-Id", "clock")).andExpect(status().isOk());
	}

	@Test
	void theEndpointsResetGivesOneKeyItsQuotaBack() throws Exception {
		exhaust("reset");
		this.mvc.perform(delete("/actuator/ratelimits/runs/reset")).andExpect(status().isOk());
		this.mvc.perform(post("/runs").header("X-User-Id", "reset")).andExpect(status().isOk());
	}

	@Test
	void aTrustedLocalProxyLetsEachRequestNameItsClient() throws Exception {
		for (int i = 0; i < 2; i++) {
			this.mvc.perform(get("/api/items").header("X-Forwarded-For", "192.0.2.1")).andExpect(status().isOk());
		}
		this.mvc.perform(get("/api/items").header("X-Forwarded-For", "192.0.2.1"))
			.andExpect(status().isTooManyRequests());
		this.mvc.perform(get("/api/items").header("X-Forwarded-For", "192.0.2.2")).andExpect(status().isOk());
	}

	private void exhaust(String user) throws Exception {
		this.mvc.perform(post("/runs").header("X-User-Id", user)).andExpect(status().isOk());
		this.mvc.perform(post("/runs").header("X-User-Id", user)).andExpect(status().isOk());
		this.mvc.perform(post("/runs").header("X-User-Id", user)).andExpect(status().isTooManyRequests());
	}

	/** The clock of docs/testing.md: wall-clock time at start, then only what the test adds. */
	@TestConfiguration(proxyBeanMethods = false)
	static class TestClock {

		@Bean
		AtomicLong now() {
			return new AtomicLong(TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis()));
		}

		@Bean
		TimeSource testTimeSource(AtomicLong now) {
			return now::get;
		}

	}

}
