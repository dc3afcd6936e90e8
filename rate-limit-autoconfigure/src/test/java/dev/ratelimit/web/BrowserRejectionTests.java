package dev.ratelimit.web;

import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.ratelimit.support.HeldCalls;
import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

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

	/** What a browser sends when it navigates to a page. */
	static final String BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

	@LocalServerPort
	int port;

	@Test
	void aBrowserRefusedByARouteRuleGetsTheErrorPage() {
		String user = user();
		assertThat(get("/api/open", user, BROWSER).status()).isEqualTo(200);
		Answer refused = get("/api/open", user, BROWSER);
		assertWhitelabelPage(refused, 429);
		assertThat(refused.headers().firstValue("RateLimit")).hasValue("\"per-user\";r=0;t=3600");
	}

	@Test
	void aBrowserRefusedByAnAnnotationGetsTheErrorPage() {
		String user = user();
		assertThat(get("/annotated", user, BROWSER).status()).isEqualTo(200);
		assertWhitelabelPage(get("/annotated", user, BROWSER), 429);
	}

	@Test
	void aBrowserRefusedByASharedCapGetsThe503ErrorPage() throws Exception {
		String id = UUID.randomUUID().toString();
		CompletableFuture<Answer> inFlight = TestHttp.on(this.port)
			.sendAsync("GET", "/downstream?id=" + id, "X-User-Id", user());
		try {
			HeldCalls.entered(id).orTimeout(10, TimeUnit.SECONDS).join();
			Answer refused = get("/downstream", user(), BROWSER);
			assertWhitelabelPage(refused, 503);
			assertThat(refused.headers().firstValue("Retry-After")).hasValue("1");
		}
		finally {
			HeldCalls.release(id);
		}
		assertThat(inFlight.get(10, TimeUnit.SECONDS).status()).isEqualTo(200);
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "*/*", "application/json", "application/problem+json",
			"application/json, text/html", "text/html;q=0.5, application/json" })
	void anApiClientKeepsGettingProblemJson(String accept) {
		String user = user();
		Map<String, String> refusingPolicy = Map.of("/api/open", "per-user", "/annotated", "annotated");
		refusingPolicy.forEach((path, policy) -> {
			assertThat(get(path, user, accept).status()).isEqualTo(200);
			Answer refused = get(path, user, accept);
			assertThat(refused.status()).isEqualTo(429);
			assertThat(refused.headers().firstValue("Content-Type"))
				.hasValueSatisfying((type) -> assertThat(type).startsWith("application/problem+json"));
			assertThat(refused.body()).contains("\"violated-policies\":[\"" + policy + "\"]");
			assertThat(refused.headers().firstValue("Retry-After")).hasValue("3600");
			assertThat(refused.headers().firstValue("Cache-Control")).hasValue("no-store");
		});
	}

	private static void assertWhitelabelPage(Answer response, int status) {
		assertThat(response.status()).isEqualTo(status);
		assertThat(response.headers().firstValue("Content-Type"))
			.hasValueSatisfying((type) -> assertThat(type).startsWith("text/html"));
		assertThat(response.body()).contains("Whitelabel Error Page").contains("status=" + status);
		assertThat(response.headers().firstValue("Retry-After")).isPresent();
		assertThat(response.headers().firstValue("Cache-Control")).hasValue("no-store");
	}

	private Answer get(String path, String user, String accept) {
		TestHttp http = TestHttp.on(this.port);
		return accept.isEmpty() ? http.get(path, "X-User-Id", user)
				: http.get(path, "X-User-Id", user, "Accept", accept);
	}

	private static String user() {
		return "u-" + UUID.randomUUID();
	}

}
