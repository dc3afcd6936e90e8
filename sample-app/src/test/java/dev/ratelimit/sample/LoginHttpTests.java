package dev.ratelimit.sample;

import java.time.Duration;
import java.util.UUID;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;

import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code POST /login} over real HTTP: 5 failed logins per username per 15
 * minutes, successful logins not counted, the 6th attempt refused before the
 * password is checked.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
@Import(SampleApplicationHttpTests.ManualClock.class)
class LoginHttpTests {

	@LocalServerPort
	int port;

	@Autowired
	ManualTimeSource clock;

	TestHttp http;

	@BeforeEach
	void setUp() {
		this.http = TestHttp.on(this.port);
		this.clock.advance(Duration.ofHours(1));
	}

	@Test
	void fiveFailedLoginsThenEvenTheRightPasswordIsRefusedUntilTheWindowEnds() throws Exception {
		for (int i = 0; i < 5; i++) {
			assertThat(login("demo", "guess-" + i).status()).isEqualTo(401);
		}
		assertThat(login("demo", "demo").status()).isEqualTo(429);
		this.clock.advance(Duration.ofMinutes(15));
		assertThat(login("demo", "demo").status()).isEqualTo(200);
	}

	@Test
	void successfulLoginsAreNotCounted() throws Exception {
		for (int i = 0; i < 10; i++) {
			assertThat(login("demo", "demo").status()).isEqualTo(200);
		}
		for (int i = 0; i < 5; i++) {
			assertThat(login("demo", "wrong").status()).isEqualTo(401);
		}
		assertThat(login("demo", "demo").status()).isEqualTo(429);
	}

	@Test
	void failuresAreCountedPerUsername() throws Exception {
		String mallory = "mallory-" + UUID.randomUUID();
		for (int i = 0; i < 5; i++) {
			assertThat(login(mallory, "x").status()).isEqualTo(401);
		}
		assertThat(login(mallory, "x").status()).isEqualTo(429);
		assertThat(login("demo", "demo").status()).isEqualTo(200);
	}

	@Test
	void loginWithoutUsernameIsABadRequest() throws Exception {
		assertThat(this.http.postJson("/login", "{\"password\":\"demo\"}")
			.status()).isEqualTo(400);
	}

	private Answer login(String username, String password) throws Exception {
		return this.http.postJson("/login", "{\"username\":\"" + username + "\",\"password\":\"" + password + "\"}",
				"Content-Type", "application/json");
	}

}
