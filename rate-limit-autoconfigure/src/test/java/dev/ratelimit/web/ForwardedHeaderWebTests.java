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
 * The {@code ip} key with {@code rate-limit.client-ip.forwarded-header=forwarded}:
 * the RFC 7239 {@code Forwarded} header names the client, from trusted proxies
 * only, and {@code X-Forwarded-For} is not read at all.
 */
@SpringBootTest(classes = WebTestApplication.class,
		properties = { "rate-limit.client-ip.trusted-proxies=10.0.0.0/8",
				"rate-limit.client-ip.forwarded-header=forwarded", "rate-limit.policies.per-ip.capacity=2",
				"rate-limit.policies.per-ip.refill=2/1h", "rate-limit.policies.per-ip.key=ip",
				"rate-limit.routes[0].pattern=/api/**", "rate-limit.routes[0].policies=per-ip",
				// WebTestApplication's other endpoints need it
				"rate-limit.policies.by-principal.capacity=1", "rate-limit.policies.by-principal.refill=1/1h" })
@AutoConfigureMockMvc
@Import(ForwardedHeaderWebTests.Clock.class)
class ForwardedHeaderWebTests {

	@Autowired
	MockMvc mvc;

	@Autowired
	ManualTimeSource clock;

	@BeforeEach
	void refillEverything() {
		this.clock.advance(Duration.ofDays(1));
	}

	@Test
	void forwardedFromATrustedProxyNamesTheClient() throws Exception {
		for (int i = 0; i < 2; i++) {
			this.mvc
				.perform(get("/api/open").with(peer("10.1.1.1")).header("Forwarded", "for=198.51.100.1;proto=https"))
				.andExpect(status().isOk());
		}
		this.mvc.perform(get("/api/open").with(peer("10.1.1.1")).header("Forwarded", "For=\"198.51.100.1:4711\""))
			.andExpect(status().isTooManyRequests());
		// same proxy, another client: a bucket of its own
		this.mvc.perform(get("/api/open").with(peer("10.1.1.1")).header("Forwarded", "for=198.51.100.2"))
			.andExpect(status().isOk());
	}

	@Test
	void forwardedFromAnUntrustedPeerIsIgnored() throws Exception {
		for (int i = 0; i < 2; i++) {
			this.mvc.perform(get("/api/open").with(peer("203.0.113.5")).header("Forwarded", "for=198.51.100.9" + i))
				.andExpect(status().isOk());
		}
		this.mvc.perform(get("/api/open").with(peer("203.0.113.5")).header("Forwarded", "for=198.51.100.77"))
			.andExpect(status().isTooManyRequests());
	}

	@Test
	void chainIsReadFromTheRightSoAPrependedSpoofIsIgnored() throws Exception {
		for (int i = 0; i < 2; i++) {
			this.mvc.perform(get("/api/open").with(peer("10.1.1.1"))
				.header("Forwarded", "for=6.6.6." + i + ", for=198.51.100.3;by=10.2.2.2", "for=10.2.2.2"))
				.andExpect(status().isOk());
		}
		this.mvc.perform(get("/api/open").with(peer("10.1.1.1")).header("Forwarded", "for=198.51.100.3, for=10.2.2.2"))
			.andExpect(status().isTooManyRequests());
		this.mvc.perform(get("/api/open").with(peer("10.1.1.1")).header("Forwarded", "for=198.51.100.4, for=10.2.2.2"))
			.andExpect(status().isOk());
	}

	@Test
	void xForwardedForIsNotReadWhenForwardedIsConfigured() throws Exception {
		for (int i = 0; i < 2; i++) {
			this.mvc.perform(get("/api/open").with(peer("10.3.3.3")).header("X-Forwarded-For", "198.51.100.5" + i))
				.andExpect(status().isOk());
		}
		this.mvc.perform(get("/api/open").with(peer("10.3.3.3")).header("X-Forwarded-For", "198.51.100.59"))
			.andExpect(status().isTooManyRequests());
	}

	@Test
	void ipv6ClientsInForwardedAreKeyedByTheirSlash64() throws Exception {
		this.mvc.perform(get("/api/open").with(peer("10.1.1.1")).header("Forwarded", "for=\"[2001:db8:0:7::1]:4711\""))
			.andExpect(status().isOk());
		this.mvc.perform(get("/api/open").with(peer("10.1.1.1")).header("Forwarded", "for=\"[2001:DB8:0:7::2]\""))
			.andExpect(status().isOk());
		this.mvc.perform(get("/api/open").with(peer("10.1.1.1")).header("Forwarded", "for=\"[2001:db8:0:7:0:0:0:3]\""))
			.andExpect(status().isTooManyRequests());
		this.mvc.perform(get("/api/open").with(peer("10.1.1.1")).header("Forwarded", "for=\"[2001:db8:0:8::1]\""))
			.andExpect(status().isOk());
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Clock {

		@Bean
		ManualTimeSource rateLimitTimeSource() {
			return new ManualTimeSource();
		}

	}

}
