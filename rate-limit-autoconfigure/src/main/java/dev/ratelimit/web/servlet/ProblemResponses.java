package dev.ratelimit.web.servlet;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;

import dev.ratelimit.web.HeaderWriter;
import dev.ratelimit.web.ProblemJson;
import dev.ratelimit.web.ProblemTypes;
import dev.ratelimit.web.RefusalFields;
import dev.ratelimit.web.Rejection;


/**
 * The default {@link RejectionHandler}: answers with the HTTP contract's RFC
 * 9457 {@code application/problem+json} body, marked
 * {@code Cache-Control: no-store} and with {@code Retry-After} when a retry can
 * succeed. A browser, whose {@code Accept} prefers {@code text/html} to JSON,
 * gets an HTML page instead: the status is sent with
 * {@link HttpServletResponse#sendError(int, String)}, so that the servlet
 * container's error page renders it; in a Spring Boot application that is the
 * application's own error view for the status ({@code error/429},
 * {@code error/4xx}) or Boot's whitelabel page. The header fields are the same
 * for both.
 */
public final class ProblemResponses implements RejectionHandler {

	/** Problem type of a caller over a limit of its own, answered with 429: {@link ProblemTypes#QUOTA_EXCEEDED}. */
	public static final String QUOTA_EXCEEDED = ProblemTypes.QUOTA_EXCEEDED;

	/**
	 * Problem type of the service short of capacity, answered with 503:
	 * {@link ProblemTypes#TEMPORARY_REDUCED_CAPACITY}.
	 */
	public static final String TEMPORARY_REDUCED_CAPACITY = ProblemTypes.TEMPORARY_REDUCED_CAPACITY;

	/** Writes a refusal's fields to a servlet response. */
	private static final HeaderWriter<HttpServletResponse> FIELDS = HttpServletResponse::setHeader;

	private static final MediaType PROBLEM_JSON = MediaType.APPLICATION_PROBLEM_JSON;

	@Override
	public void handle(HttpServletRequest request, HttpServletResponse response, Rejection rejection)
			throws IOException {
		RefusalFields.write(rejection, response, FIELDS);
		if (prefersHtml(request)) {
			// The detail is safe to show: it names only the limits the caller may see.
			response.sendError(rejection.status(), rejection.detail());
			return;
		}
		response.setStatus(rejection.status());
		// JSON is UTF-8 by definition (RFC 8259): no charset parameter, the same type as on every stack.
		response.setContentType(PROBLEM_JSON.toString());
		byte[] body = json(request, rejection).getBytes(StandardCharsets.UTF_8);
		response.setContentLength(body.length);
		response.getOutputStream().write(body);
		response.flushBuffer();
	}

	/**
	 * Returns whether a request's {@code Accept} prefers an HTML page to JSON, as a
	 * browser's does ({@code text/html,application/xhtml+xml,application/xml;q=0.9,...}):
	 * {@code text/html} or {@code application/xhtml+xml} is listed with a higher
	 * quality than any JSON type. Wildcards count for neither, so an API client
	 * that accepts anything, a JSON type, or sends no {@code Accept} gets JSON.
	 * A custom {@link RejectionHandler} may use it to leave browsers to this one.
	 * @param request the request
	 * @return whether to answer with HTML
	 */
	public static boolean prefersHtml(HttpServletRequest request) {
		return prefersHtml(Collections.list(request.getHeaders(HttpHeaders.ACCEPT)));
	}

	/**
	 * Returns whether {@code Accept} field values prefer an HTML page to JSON,
	 * by the rule of {@link #prefersHtml(HttpServletRequest)}.
	 * @param accept the request's {@code Accept} field values
	 * @return whether to answer with HTML
	 */
	public static boolean prefersHtml(List<String> accept) {
		return ProblemJson.prefersHtml(accept);
	}

	private static String json(HttpServletRequest request, Rejection rejection) {
		return ProblemJson.body(rejection, request.getRequestURI());
	}

}
