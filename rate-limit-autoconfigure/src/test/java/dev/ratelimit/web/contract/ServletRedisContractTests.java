package dev.ratelimit.web.contract;

import java.util.List;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import dev.ratelimit.support.RedisServerFixture;
import dev.ratelimit.support.TestHttp;

/**
 * The web contract's scenarios on Spring MVC (Tomcat), on a Redis of their
 * own, which the failure-mode scenario freezes.
 */
@SpringBootTest(classes = ServletContractApp.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=servlet", "rate-limit.backend=redis" })
@TestPropertySource(locations = { "classpath:web-contract/limits.properties", "classpath:web-contract/routes.properties" })
class ServletRedisContractTests extends WebContractScenarios {

	private static final RedisServerFixture redis = RedisServerFixture.start();

	@LocalServerPort
	int port;

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		redis.register(registry);
	}

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@Override
	protected TestHttp http() {
		return TestHttp.on(this.port);
	}

	@Override
	protected List<String> handlerStyles() {
		return List.of("plain");
	}

	@Override
	protected @Nullable String cannot(Scenario scenario, @Nullable String style) {
		return ServletStack.cannot(scenario, true);
	}

	@Override
	protected RedisServerFixture redis() {
		return redis;
	}

}
