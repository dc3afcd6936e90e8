package dev.ratelimit.web;

import java.net.InetAddress;
import java.time.Duration;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mockito.MockedStatic;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MockMvc;

import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.web.servlet.ProblemResponses;

import static dev.ratelimit.support.MockRequests.peer;
import static org.hamcrest.Matchers.containsString;
import static org.mockito.Mockito.mockStatic;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The servlet integration on the in-memory backend: layered annotations, route
 * rules meeting annotations, principal and proxy-aware keys, hostile costs, and
 * limiter exceptions from services inside controllers.
 */
@SpringBootTest(classes = WebTestApplication.class,
		properties = { "rate-limit.client-ip.trusted-proxies=10.0.0.0/8",
				"rate-limit.policies.by-principal.capacity=1", "rate-limit.policies.by-principal.refill=1/1h",
				"rate-limit.policies.by-principal.key=principal",
				"rate-limit.policies.per-ip.capacity=2", "rate-limit.policies.per-ip.refill=2/1h",
				"rate-limit.policies.per-ip.key=ip", "rate-limit.routes[0].pattern=/api/**",
				"rate-limit.routes[0].methods=GET", "rate-limit.routes[0].policies=per-ip" })
@AutoConfigureMockMvc
@Import(RateLimitWebTests.Clock.class)
class RateLimitWebTests {

	@Autowired
	MockMvc mvc;

	@Autowired
	ManualTimeSource clock;

	@BeforeEach
	void refillEverything() {
		this.clock.advance(Duration.ofDays(1));
	}

	@Test
	void layeredAnnotationsReportEveryPolicyAndNameOnlyTheViolatedOne() throws Exception {
		this.mvc.perform(post("/layered").header("X-User-Id", "u1"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"global-runs\";q=100;w=3600, \"user-runs\";q=2;w=3600"))
			.andExpect(header().string("RateLimit", "\"global-runs\";r=99;t=36, \"user-runs\";r=1;t=1800"));
		this.mvc.perform(post("/layered").header("X-User-Id", "u1")).andExpect(status().isOk());
		this.mvc.perform(post("/layered").header("X-User-Id", "u1"))
			.andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "1800"))
			.andExpect(jsonPath("$['violated-policies']").value("user-runs"));
		this.mvc.perform(post("/layered").header("X-User-Id", "u2")).andExpect(status().isOk());
	}

	@Test
	void limitedServiceInsideAControllerIsAnsweredDespiteACatchAllExceptionHandler() throws Exception {
		this.mvc.perform(get("/report")).andExpect(status().isOk()).andExpect(header().doesNotExist("RateLimit"));
		// A global limit on a service the handler calls is internal: the service's reduced capacity, not named.
		this.mvc.perform(get("/report"))
			.andExpect(status().isServiceUnavailable())
			.andExpect(header().string("Cache-Control", "no-store"))
			.andExpect(header().string("Retry-After", "3600"))
			.andExpect(jsonPath("$.type").value(ProblemResponses.TEMPORARY_REDUCED_CAPACITY))
			.andExpect(jsonPath("$['violated-policies']").doesNotExist())
			.andExpect(header().doesNotExist("RateLimit-Policy"));
	}

	@Test
	void principalKeyLimitsEachAuthenticatedUser() throws Exception {
		this.mvc.perform(get("/me").principal(() -> "ann")).andExpect(status().isOk());
		this.mvc.perform(get("/me").principal(() -> "ann")).andExpect(status().isTooManyRequests());
		this.mvc.perform(get("/me").principal(() -> "ben")).andExpect(status().isOk());
	}

	@Test
	void routeRuleLimitsBeforeTheControllerAndMergesHeadersWithAnnotations() throws Exception {
		this.mvc.perform(get("/api/annotated").with(peer("192.0.2.1")))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit-Policy", "\"per-ip\";q=2;w=3600, \"api-extra\";q=3;w=3600"));
		this.mvc.perform(get("/api/open").with(peer("192.0.2.1"))).andExpect(status().isOk());
		this.mvc.perform(get("/api/open").with(peer("192.0.2.1")))
			.andExpect(status().isTooManyRequests())
			.andExpect(jsonPath("$['violated-policies'][0]").value("per-ip"));
		// Only GET is limited by the rule
		this.mvc.perform(post("/api/open").with(peer("192.0.2.1"))).andExpect(header().doesNotExist("RateLimit"));
	}

	@Test
	void forwardedForIsHonouredOnlyFromTrustedProxies() throws Exception {
		for (int i = 0; i < 2; i++) {
			this.mvc.perform(get("/api/open").with(peer("10.1.1.1")).header("X-Forwarded-For", "198.51.100.1"))
				.andExpect(status().isOk());
		}
		this.mvc.perform(get("/api/open").with(peer("10.1.1.1")).header("X-Forwarded-For", "198.51.100.1"))
			.andExpect(status().isTooManyRequests());
		// same proxy, another client: a bucket of its own
		this.mvc.perform(get("/api/open").with(peer("10.1.1.1")).header("X-Forwarded-For", "198.51.100.2"))
			.andExpect(status().isOk());
		// an untrusted peer cannot pick its bucket by sending the header
		for (int i = 0; i < 2; i++) {
			this.mvc.perform(get("/api/open").with(peer("203.0.113.5")).header("X-Forwarded-For", "198.51.100.9" + i))
				.andExpect(status().isOk());
		}
		this.mvc.perform(get("/api/open").with(peer("203.0.113.5")).header("X-Forwarded-For", "198.51.100.77"))
			.andExpect(status().isTooManyRequests());
	}

	@Test
	void hostileForwardedForIsNeverLookedUpAndCountsAgainstTheLastTrustedHop() throws Exception {
		String[] hostile = { "1.2.3.999", "999.999.999.999", "evil.example.com", "x".repeat(10_000) };
		try (MockedStatic<InetAddress> inet = mockStatic(InetAddress.class)) {
			for (int i = 0; i < hostile.length; i++) {
				this.mvc
					.perform(get("/api/open").with(peer("10.1.1.1"))
						.header("X-Forwarded-For", hostile[i] + ", 10.2.2.2"))
					.andExpect((i < 2) ? status().isOk() : status().isTooManyRequests());
			}
			inet.verifyNoInteractions();
		}
	}

	@Test
	void everyFormOfOneIpv6AddressSharesABucket() throws Exception {
		this.mvc.perform(get("/api/open").with(peer("2001:db8::7"))).andExpect(status().isOk());
		this.mvc.perform(get("/api/open").with(peer("2001:DB8:0:0:0:0:0:7"))).andExpect(status().isOk());
		this.mvc.perform(get("/api/open").with(peer("[2001:db8::7]"))).andExpect(status().isTooManyRequests());
	}

	@Test
	void ipv6CallersAreKeyedByTheirSlash64() throws Exception {
		this.mvc.perform(get("/api/open").with(peer("2001:db8:0:7::1"))).andExpect(status().isOk());
		// the same host, picking another address of its /64 for each request
		this.mvc.perform(get("/api/open").with(peer("2001:db8:0:7:ffff:ffff:ffff:ffff"))).andExpect(status().isOk());
		this.mvc.perform(get("/api/open").with(peer("2001:db8:0:7:1234:5678:9abc:def0")))
			.andExpect(status().isTooManyRequests());
		// the neighbouring /64 is another caller
		this.mvc.perform(get("/api/open").with(peer("2001:db8:0:8::1"))).andExpect(status().isOk());
	}

	@Test
	void ipv6ClientsNamedByATrustedProxyAreAggregatedToo() throws Exception {
		this.mvc.perform(get("/api/open").with(peer("10.1.1.1")).header("X-Forwarded-For", "[2001:db8:0:9::1]:4711"))
			.andExpect(status().isOk());
		this.mvc.perform(get("/api/open").with(peer("10.1.1.1")).header("X-Forwarded-For", "2001:DB8:0:9::2"))
			.andExpect(status().isOk());
		this.mvc.perform(get("/api/open").with(peer("10.1.1.1")).header("X-Forwarded-For", "2001:db8:0:9:0:0:0:3"))
			.andExpect(status().isTooManyRequests());
	}

	@Test
	void costFromAnArgumentIsChargedAndHostileCostsAreBadRequests() throws Exception {
		this.mvc.perform(post("/batch").param("size", "7"))
			.andExpect(status().isOk())
			.andExpect(header().string("RateLimit", "\"batch\";r=3;t=2520"));
		for (String hostile : new String[] { "-1", "NaN", "1.5", "Infinity", "lots", "11" }) {
			this.mvc.perform(post("/batch").param("size", hostile))
				.andExpect(status().isBadRequest())
				.andExpect(header().string("Content-Type", containsString("application/problem+json")))
				.andExpect(jsonPath("$.detail").value(containsString("'batch'")));
		}
		this.mvc.perform(post("/batch").param("size", "4")).andExpect(status().isTooManyRequests());
	}

	@Test
	void costFromTheRequestBodyIsValidatedToo() throws Exception {
		this.mvc.perform(post("/body-cost").contentType(MediaType.APPLICATION_JSON).content("{\"n\": -5}"))
			.andExpect(status().isBadRequest())
			.andExpect(jsonPath("$.detail").value(containsString("negative")));
		this.mvc.perform(post("/body-cost").contentType(MediaType.APPLICATION_JSON).content("{\"n\": 2}"))
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
