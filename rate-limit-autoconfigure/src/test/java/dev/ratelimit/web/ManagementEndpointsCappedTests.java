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
 * With {@code rate-limit.filter.cap-management-endpoints=true} a route cap on
 * every path counts the actuator's endpoints too, as asked: a full cap refuses
 * the health probe. (By default it does not: the web contract's scenarios.)
 */
@SpringBootTest(classes = ServletContractApp.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=servlet", "rate-limit.filter.cap-management-endpoints=true" })
@TestPropertySource(locations = { "classpath:web-contract/limits.properties", "classpath:web-contract/routes.properties" })
class ManagementEndpointsCappedTests {

	@LocalServerPort
	private int port;

	@Test
	void aFullCapOnEveryPathRefusesTheHealthProbeWhenAskedTo() {
		TestHttp http = TestHttp.on(this.port);
		String key = "k-" + UUID.randomUUID();
		String id = UUID.randomUUID().toString();
		CompletableFuture<Answer> held = http.sendAsync("GET", "/r/everywhere/hold?id=" + id, "X-Everywhere", key);
		HeldCalls.entered(id).orTimeout(10, TimeUnit.SECONDS).join();
		try {
			assertThat(http.get("/actuator/health", "X-Everywhere", key).status()).isEqualTo(503);
			assertThat(http.get("/actuator/health").status()).isEqualTo(200);
		}
		finally {
			HeldCalls.release(id);
		}
		assertThat(held.orTimeout(10, TimeUnit.SECONDS).join().status()).isEqualTo(200);
	}

}
