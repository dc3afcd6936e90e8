package dev.ratelimit.web;

import java.util.UUID;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The route filter decides a request once, whatever the container dispatches
 * after or inside it: a forward or an include of a request it is handling, the
 * error dispatch of one that failed or sent an error, and the asynchronous
 * dispatch of one that answered later are not counted again, though the rule
 * ({@code /**}) matches their paths too. A request the filter first sees in a
 * forward is decided there. Over a real server, because MockMvc performs no
 * error dispatch.
 */
@SpringBootTest(classes = DispatchTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "rate-limit.policies.per-user.capacity=100", "rate-limit.policies.per-user.refill=100/1d",
				"rate-limit.policies.per-user.key=header('X-User-Id')", "rate-limit.routes[0].pattern=/**",
				"rate-limit.routes[0].policies=per-user" })
class FilterDispatchTests {

	@LocalServerPort
	int port;

	@ParameterizedTest
	@ValueSource(strings = { "/target", "/forward", "/include", "/async" })
	void aRequestIsCountedOnceWhateverItDispatches(String path) {
		String user = user();
		Answer response = get(path, user);
		assertThat(response.status()).isEqualTo(200);
		assertThat(response.body()).isIn("target", "async");
		assertThat(remaining(response)).isEqualTo(99);
		assertThat(remainingAfterOneMore(user)).isEqualTo(98);
	}

	@ParameterizedTest
	@ValueSource(strings = { "/failing", "/teapot", "/no-such-path" })
	void theErrorDispatchOfARequestIsNotCountedAgain(String path) {
		String user = user();
		Answer response = get(path, user);
		assertThat(response.status()).isIn(500, 418, 404);
		assertThat(remainingAfterOneMore(user)).isEqualTo(98);
	}

	@Test
	void aRequestTheFilterFirstSeesInAForwardIsCountedThere() {
		String user = user();
		Answer response = get("/moved", user);
		assertThat(response.body()).isEqualTo("target");
		assertThat(remaining(response)).isEqualTo(99);
		assertThat(remainingAfterOneMore(user)).isEqualTo(98);
	}

	private int remainingAfterOneMore(String user) {
		return remaining(get("/target", user));
	}

	/** The {@code r} of the {@code RateLimit} field: what one unit a day refills cannot change during a test. */
	static int remaining(Answer response) {
		String state = response.headers().firstValue("RateLimit").orElseThrow();
		assertThat(state).startsWith("\"per-user\";r=");
		return Integer.parseInt(state.substring(state.indexOf(";r=") + 3, state.indexOf(";t=")));
	}

	private Answer get(String path, String user) {
		return TestHttp.on(this.port).get(path, "X-User-Id", user, "Accept", "application/json");
	}

	private static String user() {
		return "u-" + UUID.randomUUID();
	}

}
