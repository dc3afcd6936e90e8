package dev.ratelimit.web;

import java.util.UUID;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import dev.ratelimit.support.TestHttp;
import dev.ratelimit.support.TestHttp.Answer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A browser refused by the limiter gets the application's own error view for
 * the status: {@code error/429.html}, or {@code error/4xx.html} and
 * {@code error/5xx.html} for a status without a page of its own. The pages are static ones, which Spring Boot finds
 * without a template engine; this application keeps them in a static location
 * of their own so that no other test sees them.
 */
@SpringBootTest(classes = RejectionTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "spring.web.resources.static-locations=classpath:/rejection-pages/")
class BrowserErrorViewTests {

	@LocalServerPort
	int port;

	@Test
	void aBrowserRefusedByARouteRuleGetsTheApplicationsPage() {
		String user = user();
		assertThat(get("/api/open", user).status()).isEqualTo(200);
		assertPage(get("/api/open", user), 429, "You are going a little fast");
	}

	@Test
	void aBrowserRefusedByAnAnnotationGetsTheApplicationsPage() {
		String user = user();
		assertThat(get("/annotated", user).status()).isEqualTo(200);
		assertPage(get("/annotated", user), 429, "You are going a little fast");
	}

	@Test
	void aBrowserRefusedByALimitItIsNotToldOfGetsTheApplicationsPageOf503() {
		String user = user();
		assertThat(get("/hidden/open", user).status()).isEqualTo(200);
		assertPage(get("/hidden/open", user), 503, "We are short of capacity right now");
	}

	@Test
	void aBrowserWithAnInvalidCostGetsTheApplicationsPageOfTheSeries() {
		Answer refused = get("/batch?size=-1", user());
		assertThat(refused.status()).isEqualTo(400);
		assertThat(refused.body()).contains("Something about this request is not right");
		assertThat(refused.headers().firstValue("Retry-After")).isEmpty();
	}

	private static void assertPage(Answer response, int status, String text) {
		assertThat(response.status()).isEqualTo(status);
		assertThat(response.headers().firstValue("Content-Type"))
			.hasValueSatisfying((type) -> assertThat(type).startsWith("text/html"));
		assertThat(response.body()).contains(text).doesNotContain("Whitelabel");
		assertThat(response.headers().firstValue("Retry-After")).hasValue("3600");
		assertThat(response.headers().firstValue("Cache-Control")).hasValue("no-store");
	}

	private Answer get(String path, String user) {
		return TestHttp.on(this.port).get(path, "X-User-Id", user, "Accept", BrowserRejectionTests.BROWSER);
	}

	private static String user() {
		return "u-" + UUID.randomUUID();
	}

}
