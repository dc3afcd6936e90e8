package dev.ratelimit.web;

import java.util.UUID;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances of the route filter, registered under two names with the same
 * rule, each decide a request once, as two {@code OncePerRequestFilter}s would:
 * the second is nested in the first, and neither takes it for a nested dispatch
 * of its own; a forward inside them is counted by neither.
 */
@SpringBootTest(classes = DispatchTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "test.second-filter=true", "rate-limit.policies.per-user.capacity=100",
				"rate-limit.policies.per-user.refill=100/1d", "rate-limit.policies.per-user.key=header('X-User-Id')",
				"rate-limit.routes[0].pattern=/**", "rate-limit.routes[0].policies=per-user" })
class TwoRouteFiltersTests {

	@LocalServerPort
	int port;

	@ParameterizedTest
	@ValueSource(strings = { "/target", "/forward", "/include", "/async", "/failing" })
	void eachInstanceCountsARequestOnce(String path) {
		String user = user();
		get(path, user);
		assertThat(FilterDispatchTests.remaining(get("/target", user))).isEqualTo(96);
	}

	private Answer get(String path, String user) {
		return TestHttp.on(this.port).get(path, "X-User-Id", user, "Accept", "application/json");
	}

	private static String user() {
		return "u-" + UUID.randomUUID();
	}

}
