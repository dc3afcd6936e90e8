package dev.ratelimit.web;

import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A browser refused by the limiter gets Spring Boot's HTML error page, with the
 * same {@code Retry-After} and {@code Cache-Control}; an API client keeps
 * getting problem+json. Over a real server, because the page is rendered by the
 * container's error dispatch, which MockMvc does not perform. This application
 * has no error view of its own, so the page is Boot's whitelabel one.
 */
@SpringBootTest(classes = RejectionTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT)
class BrowserRejectionTests {

	private static final String BROWSER = BrowserCalls.BROWSER;

	@LocalServerPort
	int port;

	@Autowired
	RejectionTestApplication.Gate gate;

	@Test
	void aBrowserRefusedByARouteRuleGetsTheErrorPage() {
		String user = user();
		assertThat(get("/api/open", user, BROWSER).statusCode()).isEqualTo(200);
		HttpResponse<String> refused = get("/api/open", user, BROWSER);
		assertWhitelabelPage(refused, 429);
		assertThat(refused.headers().firstValue("RateLimit")).hasValue("\"per-user\";r=0;t=3600");
	}

	@Test
	void aBrowserRefusedByAnAnnotationGetsTheErrorPage() {
		String user = user();
		assertThat(get("/annotated", user, BROWSER).statusCode()).isEqualTo(200);
		assertWhitelabelPage(get("/annotated", user, BROWSER), 429);
	}

	@Test
	void aBrowserRefusedByASharedCapGetsThe503ErrorPage() throws Exception {
		this.gate.entered = new CountDownLatch(1);
		this.gate.release = new CountDownLatch(1);
		CompletableFuture<HttpResponse<String>> inFlight = calls().getAsync("/downstream", user());
		try {
			assertThat(this.gate.entered.await(10, TimeUnit.SECONDS)).isTrue();
			HttpResponse<String> refused = get("/downstream", user(), BROWSER);
			assertWhitelabelPage(refused, 503);
			assertThat(refused.headers().firstValue("Retry-After")).hasValue("1");
		}
		finally {
			this.gate.release.countDown();
		}
		assertThat(inFlight.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "*/*", "application/json", "application/problem+json",
			"application/json, text/html", "text/html;q=0.5, application/json" })
	void anApiClientKeepsGettingProblemJson(String accept) {
		String user = user();
		Map<String, String> refusingPolicy = Map.of("/api/open", "per-user", "/annotated", "annotated");
		refusingPolicy.forEach((path, policy) -> {
			assertThat(get(path, user, accept).statusCode()).isEqualTo(200);
			HttpResponse<String> refused = get(path, user, accept);
			assertThat(refused.statusCode()).isEqualTo(429);
			assertThat(refused.headers().firstValue("Content-Type"))
				.hasValueSatisfying((type) -> assertThat(type).startsWith("application/problem+json"));
			assertThat(refused.body()).contains("\"violated-policies\":[\"" + policy + "\"]");
			assertThat(refused.headers().firstValue("Retry-After")).hasValue("3600");
			assertThat(refused.headers().firstValue("Cache-Control")).hasValue("no-store");
		});
	}

	private static void assertWhitelabelPage(HttpResponse<String> response, int status) {
		assertThat(response.statusCode()).isEqualTo(status);
		assertThat(response.headers().firstValue("Content-Type"))
			.hasValueSatisfying((type) -> assertThat(type).startsWith("text/html"));
		assertThat(response.body()).contains("Whitelabel Error Page").contains("status=" + status);
		assertThat(response.headers().firstValue("Retry-After")).isPresent();
		assertThat(response.headers().firstValue("Cache-Control")).hasValue("no-store");
	}

	private HttpResponse<String> get(String path, String user, String accept) {
		return calls().get(path, user, accept);
	}

	private BrowserCalls calls() {
		return new BrowserCalls(this.port);
	}

	private static String user() {
		return "u-" + UUID.randomUUID();
	}

}
