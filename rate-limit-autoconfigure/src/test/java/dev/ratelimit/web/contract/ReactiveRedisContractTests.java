package dev.ratelimit.web.contract;

import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.TestPropertySource;

/**
 * The web contract's scenarios on WebFlux (Reactor Netty), on a Redis of their
 * own, which the failure-mode scenario freezes.
 */
@SpringBootTest(classes = ReactiveContractApp.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "rate-limit.backend=redis" })
@TestPropertySource(locations = { "classpath:web-contract/limits.properties", "classpath:web-contract/routes.properties" })
class ReactiveRedisContractTests extends RedisWebContractScenarios {

	@Override
	protected List<String> handlerStyles() {
		return List.of("mono", "flux", "plain");
	}

	@Override
	protected @Nullable String cannot(Scenario scenario, @Nullable String style) {
		return ReactiveStack.cannot(scenario, style, true);
	}

}
