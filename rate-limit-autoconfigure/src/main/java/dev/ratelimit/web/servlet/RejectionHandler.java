package dev.ratelimit.web.servlet;

import java.io.IOException;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import dev.ratelimit.web.Rejection;

/**
 * Writes the answer to a request the limiter refused: status, header fields and
 * body. One bean of this type answers every refusal, by a route rule (in the
 * servlet filter, before Spring MVC) and by an annotation (the aspects'
 * exceptions, inside Spring MVC); define your own to use your application's
 * error format. The default, {@link ProblemResponses}, writes RFC 9457
 * {@code application/problem+json}, or lets Spring Boot render its HTML error
 * page for a browser.
 * <p>
 * When it is called, the response already carries the rate-limit header fields
 * of the limits the caller may see, and nothing else from the limiter; the
 * handler sets the status, {@code Retry-After}, caching and the body. A handler
 * that leaves the response untouched answers {@code 200} with an empty body.
 */
@FunctionalInterface
public interface RejectionHandler {

	/**
	 * Answers a refused request.
	 * @param request the request
	 * @param response the response, not yet committed
	 * @param rejection what was refused and why, told as the caller may see it
	 * @throws IOException if the response cannot be written
	 */
	void handle(HttpServletRequest request, HttpServletResponse response, Rejection rejection) throws IOException;

}
