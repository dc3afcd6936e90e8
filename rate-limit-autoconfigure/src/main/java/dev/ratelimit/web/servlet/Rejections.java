package dev.ratelimit.web.servlet;

import java.io.IOException;
import java.time.Duration;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import dev.ratelimit.core.RateLimitException;
import dev.ratelimit.web.Disclosures;
import dev.ratelimit.web.Refusals;
import dev.ratelimit.web.Rejection;

/**
 * Answers limiter exceptions: describes each as the {@link Rejection} its caller
 * may be told about and hands it to the application's {@link RejectionHandler}.
 * The route filter and the exception resolver both answer through it; an
 * application's own {@code @ExceptionHandler} can too, or call
 * {@link #describe} to build its own answer without naming a limit the caller
 * may not see.
 */
public final class Rejections {

	private final RejectionHandler handler;

	private final Refusals refusals;

	/**
	 * Creates the answerer.
	 * @param handler writes the answers
	 * @param unavailableRetryAfter the Retry-After of a limiter that cannot decide,
	 * rounded up to whole seconds
	 */
	public Rejections(RejectionHandler handler, Duration unavailableRetryAfter) {
		this.handler = handler;
		this.refusals = new Refusals(unavailableRetryAfter);
	}

	/**
	 * Answers a limiter exception through the {@link RejectionHandler}.
	 * @param request the request
	 * @param response the response, not yet committed
	 * @param ex the exception
	 * @throws IOException if the handler cannot write the response
	 */
	public void send(HttpServletRequest request, HttpServletResponse response, RateLimitException ex)
			throws IOException {
		this.handler.handle(request, response, describe(request, ex));
	}

	/**
	 * Describes a limiter exception as the caller of a request may be told about
	 * it: only the limits registered as disclosed for the request are named.
	 * <p>
	 * A refusal is the caller's own only when it names a limit the caller may
	 * see: {@code 429} with {@link ProblemResponses#QUOTA_EXCEEDED} (or, for a
	 * visible concurrency cap that protects a shared downstream, {@code 503}
	 * with {@link ProblemResponses#TEMPORARY_REDUCED_CAPACITY}), naming the
	 * visible ones. A refusal by limits the caller may not see, and a provider's
	 * pause, is the service's condition: {@code 503} with
	 * {@link ProblemResponses#TEMPORARY_REDUCED_CAPACITY}, naming nothing, as
	 * the RateLimit draft registers that problem type and RFC 9110 defines 503
	 * (the server is temporarily unable to handle the request), whatever the kind
	 * of limit and the cap's {@code rejection} setting.
	 * @param request the request
	 * @param ex the exception
	 * @return the rejection
	 */
	public Rejection describe(HttpServletRequest request, RateLimitException ex) {
		Disclosures disclosures = ServletHeaders.disclosures(request);
		return this.refusals.describe((disclosures != null) ? disclosures : Disclosures.NONE, ex);
	}

}
