package dev.ratelimit.web.contract;

import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.TestPropertySource;

/**
 * The web contract's scenarios on Spring MVC (Tomcat), on the memory backend.
 */
@SpringBootTest(classes = ServletContractApp.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "spring.main.web-application-type=servlet")
@TestPropertySource(locations = { "classpath:web-contract/limits.properties", "classpath:web-contract/routes.properties" })
class ServletMemoryContractTests extends WebContractScenarios {

	@Override
	protected List<String> handlerStyles() {
		return List.of("plain");
	}

	@Override
	protected @Nullable String cannot(Scenario scenario, @Nullable String style) {
		return ServletStack.cannot(scenario, false);
	}

}
