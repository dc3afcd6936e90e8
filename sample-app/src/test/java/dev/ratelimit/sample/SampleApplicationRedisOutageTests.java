package dev.ratelimit.sample;

import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.Limit;
import dev.ratelimit.support.ManualTimeSource;
import dev.ratelimit.support.RedisServerFixture;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample on the Redis backend while its redis-server is dead: no limit of
 * the sample turns unlimited, and brute-force protection keeps counting failed
 * logins, and only those, in this instance's memory.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
@Import(SampleApplicationHttpTests.ManualClock.class)
class SampleApplicationRedisOutageTests {

	/** A server of this class's own: the tests kill it. */
	static final RedisServerFixture redis = RedisServerFixture.start();

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		registry.add("rate-limit.backend", () -> "redis");
		redis.register(registry);
	}

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@LocalServerPort
	int port;

	@Autowired
	ManualTimeSource clock;

	@Autowired
	LimitRegistry limits;

	TestHttp http;

	@BeforeEach
	void setUp() {
		this.http = TestHttp.on(this.port);
		// A fresh 15-minute window of the local fallback for every test.
		this.clock.advance(Duration.ofHours(1));
	}

	@Test
	void noLimitOfTheSampleIsUnlimitedWhileRedisCannotAnswer() {
		assertThat(this.limits.all()).isNotEmpty().noneMatch(Limit::failsOpen);
		assertThat(this.limits.find("failed-logins")).get()
			.extracting(Limit::failureMode)
			.isEqualTo(FailureMode.LOCAL);
	}

	@Test
	void failedLoginsKeepCountingThroughAnOutageAndSuccessfulOnesStillDoNot() throws Exception {
		redis.kill();
		for (int i = 0; i < 10; i++) {
			assertThat(login("demo", "demo").status()).as("successful login %d", i).isEqualTo(200);
		}
		for (int i = 0; i < 5; i++) {
			assertThat(login("demo", "guess-" + i).status()).as("failed login %d", i).isEqualTo(401);
		}
		// Decided in memory: the sixth attempt is refused before the password is checked, the right one too.
		assertThat(login("demo", "demo").status()).isEqualTo(429);
		this.clock.advance(Duration.ofMinutes(15));
		assertThat(login("demo", "demo").status()).isEqualTo(200);
	}

	private Answer login(String username, String password) throws Exception {
		return this.http.postJson("/login", "{\"username\":\"" + username + "\",\"password\":\"" + password + "\"}",
				"Content-Type", "application/json");
	}

}
