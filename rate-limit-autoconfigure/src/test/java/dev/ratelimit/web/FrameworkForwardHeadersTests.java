package dev.ratelimit.web;

import java.time.Duration;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.web.servlet.MockMvc;

import dev.ratelimit.support.ManualTimeSource;

import static dev.ratelimit.support.MockRequests.peer;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * What docs/configuration.md says of {@code server.forward-headers-strategy=framework}:
 * Spring's {@code ForwardedHeaderFilter} runs first, sets the remote address to
 * the leftmost {@code X-Forwarded-For} value and removes the header, so it wins
 * over {@code rate-limit.client-ip.trusted-proxies}, and a client behind a proxy
 * that appends to the header picks its own key.
 */
@SpringBootTest(classes = WebTestApplication.class,
		properties = { "server.forward-headers-strategy=framework", "rate-limit.client-ip.trusted-proxies=10.0.0.0/8",
				"rate-limit.policies.per-ip.capacity=2", "rate-limit.policies.per-ip.refill=2/1h",
				"rate-limit.policies.per-ip.key=ip", "rate-limit.routes[0].pattern=/api/**",
				"rate-limit.routes[0].policies=per-ip", "rate-limit.policies.by-principal.capacity=1",
				"rate-limit.policies.by-principal.refill=1/1h" })
@AutoConfigureMockMvc
@Import(FrameworkForwardHeadersTests.Clock.class)
class FrameworkForwardHeadersTests {

	@Autowired
	MockMvc mvc;

	@Autowired
	ManualTimeSource clock;

	@BeforeEach
	void refillEverything() {
		this.clock.advance(Duration.ofDays(1));
	}

	@Test
	void springsFilterWinsAndTheLeftmostValueIsTheClient() throws Exception {
		for (int i = 0; i < 2; i++) {
			this.mvc
				.perform(get("/api/open").with(peer("10.1.1.1")).header("X-Forwarded-For", "198.51.100.1, 10.2.2.2"))
				.andExpect(status().isOk());
		}
		this.mvc.perform(get("/api/open").with(peer("10.1.1.1")).header("X-Forwarded-For", "198.51.100.1, 10.2.2.2"))
			.andExpect(status().isTooManyRequests());
		// read from the right, as the starter does, this would be 198.51.100.1 again
		this.mvc
			.perform(get("/api/open").with(peer("10.1.1.1")).header("X-Forwarded-For", "198.51.100.2, 198.51.100.1"))
			.andExpect(status().isOk());
	}

	@Test
	void aClientWhoseProxyAppendsPicksItsOwnKey() throws Exception {
		for (int i = 0; i < 5; i++) {
			this.mvc.perform(get("/api/open").with(peer("10.1.1.1"))
				.header("X-Forwarded-For", "198.51.100.9" + i + ", 203.0.113.5"))
				.andExpect(status().isOk());
		}
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Clock {

		@Bean
		ManualTimeSource rateLimitTimeSource() {
			return new ManualTimeSource();
		}

	}

}
