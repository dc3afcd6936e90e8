package dev.ratelimit.web;

import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.TestPropertySource;

import dev.ratelimit.support.HeldCalls;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;
import dev.ratelimit.web.contract.ServletContractApp;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The management endpoints are left out of the route rules' caps by default
 * (the web contract's scenarios), not out of their rate limits: a rule limiting
 * {@code /actuator/**} still limits the probes (here, those sending
 * {@code X-Probe}), while the web contract's cap on every path leaves them
 * alone.
 */
@SpringBootTest(classes = ServletContractApp.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=servlet", "rate-limit.policies.probes.capacity=1",
				"rate-limit.policies.probes.refill=1/1h", "rate-limit.policies.probes.key=header('X-Probe')",
				"rate-limit.policies.probes.exempt.when=header('X-Probe') == null",
				"rate-limit.routes[0].pattern=/**", "rate-limit.routes[0].concurrency=c-everywhere",
				"rate-limit.routes[1].pattern=/actuator/**", "rate-limit.routes[1].policies=probes" })
@TestPropertySource(locations = "classpath:web-contract/limits.properties")
class ManagementEndpointsRateLimitTests {

	@LocalServerPort
	private int port;

	@Test
	void aRouteRateLimitStillAppliesToTheManagementEndpointsTheCapsLeaveOut() {
		TestHttp http = TestHttp.on(this.port);
		String key = "k-" + UUID.randomUUID();
		String probe = "p-" + UUID.randomUUID();
		String id = UUID.randomUUID().toString();
		CompletableFuture<Answer> held = http.sendAsync("GET", "/r/everywhere/hold?id=" + id, "X-Everywhere", key);
		HeldCalls.entered(id).orTimeout(10, TimeUnit.SECONDS).join();
		try {
			// Both rules match: the cap on every path is full and leaves the probe alone, the probes' policy counts it.
			Answer first = http.get("/actuator/health", "X-Everywhere", key, "X-Probe", probe);
			assertThat(first.status()).isEqualTo(200);
			assertThat(first.rateLimit()).startsWith("\"probes\";r=0;");
			assertThat(http.get("/actuator/health", "X-Everywhere", key, "X-Probe", probe).status()).isEqualTo(429);
		}
		finally {
			HeldCalls.release(id);
		}
		assertThat(held.orTimeout(10, TimeUnit.SECONDS).join().status()).isEqualTo(200);
	}

}
