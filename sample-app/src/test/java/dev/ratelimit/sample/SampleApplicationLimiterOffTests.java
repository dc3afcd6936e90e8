package dev.ratelimit.sample;

import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample with the limiter switched off ({@code rate-limit.enabled=false},
 * how the HTTP benchmark measures the baseline): it starts, and its provider
 * calls go out without our side's limits.
 */
class SampleApplicationLimiterOffTests {

	@Test
	void startsAndAnswersWithTheLimiterOff() throws Exception {
		try (ConfigurableApplicationContext context = SpringApplication.run(SampleApplication.class,
				"--server.port=0", "--rate-limit.enabled=false")) {
			Answer response = TestHttp.of(context).postJson("/agent/chat",
					"{\"prompt\":\"hello\",\"maxTokens\":100}", "X-Tenant-Id", "acme");
			assertThat(response.status()).isEqualTo(200);
			assertThat(response.body()).contains("echo: hello");
			assertThat(response.headers().firstValue("RateLimit-Policy")).isEmpty();
		}
	}

}
