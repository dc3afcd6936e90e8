package dev.ratelimit.sample.reactive;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.ratelimit.support.TestHttp;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reactive sample's actuator, as the HTTP benchmark reads it: every
 * request the route rule admits counts once in {@code rate.limit.decisions}
 * ({@code policy:per-ip}, {@code outcome:allowed}) at {@code /actuator/metrics}.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
class ReactiveSampleMetricsHttpTests {

	private static final String DECISIONS = "/actuator/metrics/rate.limit.decisions?tag=policy:per-ip&tag=outcome:allowed";

	private static final Pattern COUNT = Pattern.compile("\"statistic\"\\s*:\\s*\"COUNT\"\\s*,\\s*\"value\"\\s*:\\s*([0-9.]+)");

	@LocalServerPort
	int port;

	@Test
	void everyAdmittedRouteRequestIsOneDecisionInTheMetrics() throws Exception {
		TestHttp http = TestHttp.on(this.port);
		assertThat(http.get("/api/hello").status()).isEqualTo(200);
		double before = count(http);
		for (int i = 0; i < 5; i++) {
			assertThat(http.get("/api/hello").status()).isEqualTo(200);
		}
		assertThat(count(http)).isEqualTo(before + 5);
	}

	@Test
	void theRateLimitsEndpointIsReadOnlyAndListsThePolicies() throws Exception {
		TestHttp http = TestHttp.on(this.port);
		var response = http.get("/actuator/ratelimits");
		assertThat(response.status()).isEqualTo(200);
		assertThat(response.body()).contains("per-ip").contains("agent-runs");
	}

	private static double count(TestHttp http) throws Exception {
		var response = http.get(DECISIONS);
		assertThat(response.status()).isEqualTo(200);
		Matcher count = COUNT.matcher(response.body());
		assertThat(count.find()).as(response.body()).isTrue();
		return Double.parseDouble(count.group(1));
	}

}
