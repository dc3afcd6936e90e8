package dev.ratelimit.gateway.contract;

import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import dev.ratelimit.web.contract.RedisWebContractScenarios;

/**
 * The web contract's scenarios through a Spring Cloud Gateway route (server
 * WebFlux) and its {@code RateLimit} filter, on a Redis of their own, which the
 * failure-mode scenario freezes.
 */
@SpringBootTest(classes = GatewayRedisContractTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "rate-limit.backend=redis" })
@TestPropertySource(locations = "classpath:web-contract/limits.properties")
class GatewayRedisContractTests extends RedisWebContractScenarios {

	@DynamicPropertySource
	static void routes(DynamicPropertyRegistry registry) {
		GatewayRoutes.register(registry);
	}

	@Override
	protected List<String> handlerStyles() {
		return List.of();
	}

	@Override
	protected @Nullable String cannot(Scenario scenario, @Nullable String style) {
		return GatewayRoutes.cannot(scenario, true);
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

	}

}
