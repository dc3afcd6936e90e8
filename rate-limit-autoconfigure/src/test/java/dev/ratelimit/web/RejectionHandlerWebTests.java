package dev.ratelimit.web;

import java.io.IOException;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.test.web.servlet.ResultActions;

import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.web.servlet.ProblemResponses;
import dev.ratelimit.web.servlet.RejectionHandler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * An application's own {@link RejectionHandler} answers every refusal, by a
 * route rule in the filter and by an annotation inside Spring MVC alike, and
 * is told about a refusal only what the caller may see.
 */
@SpringBootTest(classes = { RejectionTestApplication.class, RejectionHandlerWebTests.OwnFormat.class })
@AutoConfigureMockMvc
class RejectionHandlerWebTests {

	@Autowired
	MockMvc mvc;

	@Autowired
	RecordingHandler handler;

	private String user;

	@BeforeEach
	void newCaller() {
		this.user = "u-" + UUID.randomUUID();
		this.handler.seen.clear();
	}

	@Test
	void theApplicationsHandlerReplacesTheDefault(@Autowired ApplicationContext context) {
		assertThat(context.getBeansOfType(RejectionHandler.class)).containsOnlyKeys("ownRejections");
	}

	@Test
	void aRouteRuleRefusalIsWrittenByTheApplicationsHandler() throws Exception {
		call("/api/open").andExpect(status().isOk());
		call("/api/open").andExpect(status().isTooManyRequests())
			.andExpect(content().contentType("application/vnd.example.error+json"))
			.andExpect(header().string("X-Refused", "per-user"))
			.andExpect(header().doesNotExist("Retry-After"))
			.andExpect(header().doesNotExist("Cache-Control"))
			// The handler is called with the request's header fields already set.
			.andExpect(header().string("RateLimit", "\"per-user\";r=0;t=3600"))
			.andExpect(jsonPath("$.error").value("slow_down"))
			.andExpect(jsonPath("$.retry_in").value(3600))
			.andExpect(jsonPath("$.limits[0]").value("per-user"));
		Rejection rejection = onlyRejection();
		assertThat(rejection.status()).isEqualTo(429);
		assertThat(rejection.type()).isEqualTo(ProblemResponses.QUOTA_EXCEEDED);
		assertThat(rejection.title()).isEqualTo("Too Many Requests");
		assertThat(rejection.detail()).isEqualTo("Rate limit exceeded; retry after 3600 s.");
		assertThat(rejection.retryAfterSeconds()).isEqualTo(3600);
		assertThat(rejection.policies()).containsExactly("per-user");
		assertThat(rejection.exception()).isInstanceOf(RateLimitExceededException.class);
	}

	@Test
	void anAnnotationRefusalIsWrittenByTheApplicationsHandler() throws Exception {
		call("/annotated").andExpect(status().isOk());
		call("/annotated").andExpect(status().isTooManyRequests())
			.andExpect(content().contentType("application/vnd.example.error+json"))
			.andExpect(header().string("X-Refused", "annotated"))
			.andExpect(jsonPath("$.error").value("slow_down"))
			.andExpect(jsonPath("$.limits[0]").value("annotated"));
		assertThat(onlyRejection().policies()).containsExactly("annotated");
	}

	@Test
	void aBadCostIsWrittenByTheApplicationsHandlerWithoutRetryAfter() throws Exception {
		this.mvc.perform(get("/batch").param("size", "-1").header("X-User-Id", this.user))
			.andExpect(status().isBadRequest())
			.andExpect(jsonPath("$.error").value("bad_request"));
		Rejection rejection = onlyRejection();
		assertThat(rejection.type()).isEqualTo("about:blank");
		assertThat(rejection.retryAfterSeconds()).isZero();
		assertThat(rejection.policies()).isEmpty();
	}

	@Test
	void theHandlerIsNotToldTheNameOfAnInternalRouteRule() throws Exception {
		call("/hidden/open").andExpect(status().isOk());
		MvcResult refused = call("/hidden/open").andExpect(status().isServiceUnavailable()).andReturn();
		assertOnlyReducedCapacity(onlyRejection(), refused, "hidden");
	}

	@Test
	void theHandlerIsNotToldTheNameOfAnInternalAnnotation() throws Exception {
		call("/secret").andExpect(status().isOk());
		MvcResult refused = call("/secret").andExpect(status().isServiceUnavailable()).andReturn();
		assertOnlyReducedCapacity(onlyRejection(), refused, "secret");
	}

	@Test
	void theHandlerIsNotToldTheNameOfALimitOnAServiceTheHandlerCalls() throws Exception {
		call("/report").andExpect(status().isOk());
		MvcResult refused = call("/report").andExpect(status().isServiceUnavailable()).andReturn();
		assertOnlyReducedCapacity(onlyRejection(), refused, "reports");
	}

	private static void assertOnlyReducedCapacity(Rejection rejection, MvcResult refused, String name)
			throws Exception {
		assertThat(rejection.status()).isEqualTo(503);
		assertThat(rejection.type()).isEqualTo(ProblemResponses.TEMPORARY_REDUCED_CAPACITY);
		assertThat(rejection.title()).isEqualTo("Service Unavailable");
		assertThat(rejection.retryAfterSeconds()).isEqualTo(3600);
		assertThat(rejection.policies()).isEmpty();
		assertThat(List.of(rejection.type(), rejection.title(), rejection.detail())).noneMatch((s) -> s.contains(name));
		assertThat(refused.getResponse().getContentAsString()).doesNotContain(name);
		assertThat(refused.getResponse().getHeader("X-Refused")).isEmpty();
		// Only the raw exception names it, as documented.
		assertThat(rejection.exception().getMessage()).contains(name);
	}

	private ResultActions call(String path) throws Exception {
		return this.mvc.perform(get(path).header("X-User-Id", this.user));
	}

	private Rejection onlyRejection() {
		assertThat(this.handler.seen).hasSize(1);
		return this.handler.seen.get(0);
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnFormat {

		@Bean
		RecordingHandler ownRejections() {
			return new RecordingHandler();
		}

	}

	/**
	 * An application's own error format, keeping what it was given for the test
	 * to read.
	 */
	static class RecordingHandler implements RejectionHandler {

		final List<Rejection> seen = new CopyOnWriteArrayList<>();

		@Override
		public void handle(HttpServletRequest request, HttpServletResponse response, Rejection rejection)
				throws IOException {
			this.seen.add(rejection);
			response.setStatus(rejection.status());
			response.setHeader("X-Refused", String.join(",", rejection.policies()));
			response.setContentType("application/vnd.example.error+json");
			String limits = rejection.policies().isEmpty() ? "" : "\"" + String.join("\",\"", rejection.policies()) + "\"";
			response.getWriter()
				.write("{\"error\":\"" + ((rejection.status() == 400) ? "bad_request" : "slow_down")
						+ "\",\"retry_in\":" + rejection.retryAfterSeconds() + ",\"limits\":[" + limits + "]}");
		}

	}

}
