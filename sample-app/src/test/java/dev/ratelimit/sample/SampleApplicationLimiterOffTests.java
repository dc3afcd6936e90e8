package dev.ratelimit.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

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
			int port = ((WebServerApplicationContext) context).getWebServer().getPort();
			HttpResponse<String> response = HttpClient.newHttpClient()
				.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/agent/chat"))
					.header("Content-Type", "application/json")
					.header("X-Tenant-Id", "acme")
					.POST(HttpRequest.BodyPublishers.ofString("{\"prompt\":\"hello\",\"maxTokens\":100}"))
					.build(), HttpResponse.BodyHandlers.ofString());
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.body()).contains("echo: hello");
			assertThat(response.headers().firstValue("RateLimit-Policy")).isEmpty();
		}
	}

}
