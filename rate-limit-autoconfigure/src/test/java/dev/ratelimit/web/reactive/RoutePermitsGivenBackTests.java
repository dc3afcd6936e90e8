package dev.ratelimit.web.reactive;

import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;

import dev.ratelimit.support.EnableAutoConfigurationWithoutSecurity;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A WebFlux route rule with two concurrency caps, taken one after the other
 * off the event loop (the first waits for a permit, so it may block), when the
 * second cap's key cannot be worked out (its key expression's bean throws).
 * That key is a missing key, as any key expression that fails: the request is
 * served, never a 500, and the permit the first cap gave it goes back when it
 * completes. Before, the bean's exception failed the request, and the first
 * cap's permit was kept for good (until fcd5587): the first cap, one permit,
 * refused every later request of the route.
 */
@SpringBootTest(classes = RoutePermitsGivenBackTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "rate-limit.concurrency.first.permits=1",
				"rate-limit.concurrency.first.max-wait=200ms", "rate-limit.concurrency.second.permits=5",
				"rate-limit.concurrency.second.key=@tenantKeys.current()", "rate-limit.routes[0].pattern=/capped/**",
				"rate-limit.routes[0].concurrency=first,second" })
class RoutePermitsGivenBackTests {

	@LocalServerPort
	int port;

	@AfterEach
	void keysWorkAgain() {
		TenantKeys.failing = false;
	}

	@Test
	void aLaterCapsKeyThatFailsGivesTheEarlierCapsPermitBack() {
		assertThat(status()).isEqualTo(200);
		TenantKeys.failing = true;
		for (int i = 0; i < 3; i++) {
			assertThat(status()).as("a request whose second key fails is served under the missing key").isEqualTo(200);
		}
		TenantKeys.failing = false;
		// The first cap has one permit: kept by any of the requests before, this one would wait 200 ms and be refused.
		assertThat(status()).isEqualTo(200);
	}

	private int status() {
		return WebClient.create("http://localhost:" + this.port)
			.get()
			.uri("/capped/hello")
			.exchangeToMono((response) -> response.releaseBody().thenReturn(response.statusCode().value()))
			.block(Duration.ofSeconds(10));
	}

	/** The second cap's key: the tenant, or an exception while {@link #failing}. */
	public static class TenantKeys {

		static volatile boolean failing;

		public String current() {
			if (failing) {
				throw new IllegalStateException("tenant directory unavailable");
			}
			return "acme";
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfigurationWithoutSecurity
	static class App {

		@Bean
		TenantKeys tenantKeys() {
			return new TenantKeys();
		}

		@Bean
		Controller controller() {
			return new Controller();
		}

	}

	@RestController
	static class Controller {

		@GetMapping("/capped/hello")
		Mono<String> hello() {
			return Mono.just("hello");
		}

	}

}
