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

import dev.ratelimit.web.contract.WebContractScenarios;

/**
 * The web contract's scenarios through a Spring Cloud Gateway route (server
 * WebFlux) and its {@code RateLimit} filter, on the memory backend.
 */
@SpringBootTest(classes = GatewayMemoryContractTests.App.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "spring.main.web-application-type=reactive")
@TestPropertySource(locations = "classpath:web-contract/limits.properties")
class GatewayMemoryContractTests extends WebContractScenarios {

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
		return GatewayRoutes.cannot(scenario, false);
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

	}

}
