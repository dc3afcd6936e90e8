package dev.ratelimit.web;

import java.util.Map;
import java.util.UUID;

import jakarta.servlet.http.HttpServletRequest;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.ApplicationContext;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.ResultActions;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.web.servlet.RateLimitExceptionResolver;
import dev.ratelimit.web.servlet.RejectionHandler;
import dev.ratelimit.web.servlet.Rejections;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.not;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * With {@code rate-limit.web.exception-resolver.enabled=false} the limiter's
 * exceptions thrown inside Spring MVC reach the application's own
 * {@code @ExceptionHandler}; route-rule refusals, answered in the filter before
 * Spring MVC, still go through the {@link RejectionHandler}.
 */
@SpringBootTest(classes = { RejectionTestApplication.class, ExceptionAdviceWebTests.OwnAdvice.class },
		properties = "rate-limit.web.exception-resolver.enabled=false")
@AutoConfigureMockMvc
class ExceptionAdviceWebTests {

	@Autowired
	MockMvc mvc;

	private final String user = "u-" + UUID.randomUUID();

	@Test
	void theStartersResolverIsNotRegistered(@Autowired ApplicationContext context) {
		assertThat(context.getBeansOfType(RateLimitExceptionResolver.class)).isEmpty();
	}

	@Test
	void theApplicationsExceptionHandlerAnswersAnAnnotationsRefusal() throws Exception {
		call("/annotated").andExpect(status().isOk());
		call("/annotated").andExpect(status().isTooManyRequests())
			.andExpect(header().string("Retry-After", "3600"))
			.andExpect(jsonPath("$.message").value("Slow down."))
			.andExpect(jsonPath("$.limits[0]").value("annotated"));
	}

	@Test
	void theApplicationsExceptionHandlerCanKeepInternalLimitsUnnamed() throws Exception {
		call("/secret").andExpect(status().isOk());
		call("/secret").andExpect(status().isServiceUnavailable())
			.andExpect(jsonPath("$.message").value("Slow down."))
			.andExpect(jsonPath("$.limits").isEmpty())
			.andExpect(content().string(not(containsString("secret"))));
	}

	@Test
	void aRouteRuleRefusalStillGoesThroughTheRejectionHandler() throws Exception {
		call("/api/open").andExpect(status().isOk());
		call("/api/open").andExpect(status().isTooManyRequests())
			.andExpect(content().contentTypeCompatibleWith("application/problem+json"))
			.andExpect(jsonPath("$['violated-policies'][0]").value("per-user"));
	}

	private ResultActions call(String path) throws Exception {
		return this.mvc.perform(get(path).header("X-User-Id", this.user));
	}

	/**
	 * An application's own answer to a refusal, which asks the starter which
	 * limits the caller may be told about.
	 */
	@RestControllerAdvice
	static class OwnAdvice {

		private final Rejections rejections;

		OwnAdvice(Rejections rejections) {
			this.rejections = rejections;
		}

		@ExceptionHandler(RateLimitExceededException.class)
		ResponseEntity<Map<String, Object>> tooMany(RateLimitExceededException ex, HttpServletRequest request) {
			Rejection rejection = this.rejections.describe(request, ex);
			return ResponseEntity.status(rejection.status())
				.header("Retry-After", Long.toString(rejection.retryAfterSeconds()))
				.body(Map.of("message", "Slow down.", "limits", rejection.policies()));
		}

	}

}
