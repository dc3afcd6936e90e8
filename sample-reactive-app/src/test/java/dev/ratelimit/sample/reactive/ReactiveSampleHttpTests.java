package dev.ratelimit.sample.reactive;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reactive sample over real HTTP, as shipped, on a classpath without the
 * servlet API: the route rule, the annotated {@code Mono} and {@code Flux}
 * handlers, and the contract's answers.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
class ReactiveSampleHttpTests {

	@LocalServerPort
	int port;

	@Test
	void theServletApiIsNotOnTheClasspath() {
		assertThat(getClass().getClassLoader().getResource("jakarta/servlet/http/HttpServletRequest.class")).isNull();
	}

	@Test
	void agentRunAllowsABurstOfFiveThen429WithTheContract() {
		for (int remaining = 4; remaining >= 0; remaining--) {
			Answer allowed = send("POST", "/agent/run", "alice");
			assertThat(allowed.status()).isEqualTo(200);
			assertThat(allowed.rateLimit()).isEqualTo("\"agent-runs\";r=" + remaining + ";t=" + (5 - remaining));
		}
		Answer refused = send("POST", "/agent/run", "alice");
		assertThat(refused.status()).isEqualTo(429);
		assertThat(refused.retryAfter()).isEqualTo("1");
		assertThat(refused.body()).contains("\"violated-policies\":[\"agent-runs\"]");
		assertThat(send("POST", "/agent/run", "bob").status()).isEqualTo(200);
	}

	@Test
	void aProUsersPlanAllowsMore() {
		for (int i = 0; i < 6; i++) {
			assertThat(send("POST", "/agent/run", "pro-dana").status()).isEqualTo(200);
		}
	}

	@Test
	void fiveFailedLoginsLockAUsernameAndSuccessesDoNotCount() {
		TestHttp client = TestHttp.on(this.port);
		for (int i = 0; i < 6; i++) {
			assertThat(client.postJson("/login", TestHttp.json(new LoginController.Login("demo", "demo"))).status())
				.isEqualTo(200);
		}
		for (int i = 0; i < 5; i++) {
			assertThat(client.postJson("/login", TestHttp.json(new LoginController.Login("demo", "guess"))).status())
				.isEqualTo(401);
		}
		Answer locked = client.postJson("/login", TestHttp.json(new LoginController.Login("demo", "demo")));
		assertThat(locked.status()).isEqualTo(429);
		assertThat(locked.body()).contains("\"violated-policies\":[\"failed-logins\"]");
	}

	@Test
	void aMissingUserIsA400NotA500() {
		assertThat(send("POST", "/agent/run", null).status()).isEqualTo(400);
	}

	@Test
	void aStreamIsDecidedOncePerSubscription() {
		assertThat(send("GET", "/agent/stream", "carol").body()).contains("thinking").contains("done");
		assertThat(send("GET", "/agent/stream", "carol").status()).isEqualTo(200);
		assertThat(send("GET", "/agent/stream", "carol").status()).isEqualTo(429);
	}

	@Test
	void theRouteRuleLimitsApiPerClientAddress() {
		Answer first = send("GET", "/api/hello", null);
		assertThat(first.status()).isEqualTo(200);
		assertThat(first.rateLimit()).startsWith("\"per-ip\";r=");
	}

	private Answer send(String method, String path, String user) {
		return TestHttp.on(this.port).send(method, path, null,
				(user != null) ? new String[] { "X-User-Id", user } : new String[0]);
	}

}
