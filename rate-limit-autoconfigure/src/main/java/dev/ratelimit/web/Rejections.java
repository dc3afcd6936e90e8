package dev.ratelimit.web;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import dev.ratelimit.budget.BudgetExceededException;
import dev.ratelimit.client.ProviderPausedException;
import dev.ratelimit.concurrency.ConcurrencyLimitExceededException;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.InvalidCostException;
import dev.ratelimit.core.RateLimitBackendUnavailableException;
import dev.ratelimit.core.RateLimitException;
import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.core.RateLimitKeyMissingException;

/**
 * Answers limiter exceptions: describes each as the {@link Rejection} its caller
 * may be told about and hands it to the application's {@link RejectionHandler}.
 * The route filter and the exception resolver both answer through it; an
 * application's own {@code @ExceptionHandler} can too, or call
 * {@link #describe} to build its own answer without naming a limit the caller
 * may not see.
 */
public final class Rejections {

	private static final String TOO_MANY_REQUESTS = "Too Many Requests";

	private static final String SERVICE_UNAVAILABLE = "Service Unavailable";

	private final RejectionHandler handler;

	private final long unavailableRetryAfterSeconds;

	/**
	 * Creates the answerer.
	 * @param handler writes the answers
	 * @param unavailableRetryAfter the Retry-After of a limiter that cannot decide,
	 * rounded up to whole seconds
	 */
	public Rejections(RejectionHandler handler, Duration unavailableRetryAfter) {
		this.handler = handler;
		this.unavailableRetryAfterSeconds = Math.max(1,
				RateLimitHeaders.seconds(unavailableRetryAfter.toNanos() / 1_000L));
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
		Disclosures disclosures = Disclosures.of(request);
		return describe((disclosures != null) ? disclosures : Disclosures.NONE, ex);
	}

	/**
	 * Describes a limiter exception for a request whose disclosed limits are
	 * known: the rule of {@link #describe(HttpServletRequest, RateLimitException)},
	 * for every kind of request.
	 * @param request the limits the request's caller may see
	 * @param ex the exception
	 * @return the rejection
	 */
	Rejection describe(Disclosures request, RateLimitException ex) {
		if (ex instanceof RateLimitExceededException exceeded) {
			long retryAfter = retryAfter(exceeded.getRetryAfterMicros());
			return refusal(disclosed(request, exceeded.getViolatedPolicies()), false, retryAfter,
					"Rate limit exceeded; retry after " + retryAfter + " s.", ex);
		}
		if (ex instanceof BudgetExceededException budget) {
			long retryAfter = retryAfter(budget.getRetryAfterMicros());
			String name = budget.getPolicy().name();
			return refusal(disclosed(request, List.of(name)), false, retryAfter,
					"Budget '" + name + "' is spent; retry after " + retryAfter + " s.", ex);
		}
		if (ex instanceof ConcurrencyLimitExceededException busy) {
			ConcurrencyPolicy cap = busy.getPolicy();
			return refusal(disclosed(request, List.of(cap.name())),
					cap.rejection() == ConcurrencyPolicy.Rejection.SERVICE_UNAVAILABLE,
					retryAfter(busy.getRetryAfterMicros()), busy.getMessage() + ".", ex);
		}
		if (ex instanceof ProviderPausedException paused) {
			// A provider behind the service said "not now": the service's capacity, never the provider's name.
			return reducedCapacity(retryAfter(paused.getRetryAfterMicros()), ex);
		}
		if (ex instanceof RateLimitBackendUnavailableException unavailable) {
			return new Rejection(503, ProblemResponses.TEMPORARY_REDUCED_CAPACITY, SERVICE_UNAVAILABLE,
					"The rate limiter cannot decide right now; retry shortly.", this.unavailableRetryAfterSeconds,
					disclosed(request, List.of(unavailable.getPolicy())), ex);
		}
		String policy = (ex instanceof InvalidCostException cost) ? cost.getPolicy()
				: (ex instanceof RateLimitKeyMissingException missing) ? missing.getPolicy() : null;
		// The message names the limit and its capacity: only for a limit the caller may see.
		String detail = (policy == null || request.contains(policy)) ? ex.getMessage()
				: "The request's key or cost is invalid for a limit of this service.";
		return new Rejection(400, "about:blank", "Bad Request", detail, 0, List.of(), ex);
	}

	/**
	 * Describes a refusal by limits: the caller's own when it names one the
	 * caller may see, else the service's reduced capacity.
	 * @param named the refusing limits the caller may see, in order
	 * @param shared whether the visible limit protects a shared downstream (a cap
	 * rejecting with 503)
	 * @param retryAfter when to come back, in seconds
	 * @param detail what happened, naming only visible limits
	 * @param ex the exception
	 */
	private static Rejection refusal(List<String> named, boolean shared, long retryAfter, String detail,
			RateLimitException ex) {
		if (named.isEmpty()) {
			return reducedCapacity(retryAfter, ex);
		}
		if (shared) {
			return new Rejection(503, ProblemResponses.TEMPORARY_REDUCED_CAPACITY, SERVICE_UNAVAILABLE, detail,
					retryAfter, named, ex);
		}
		return new Rejection(429, ProblemResponses.QUOTA_EXCEEDED, TOO_MANY_REQUESTS, detail, retryAfter, named, ex);
	}

	/**
	 * Describes a refusal by capacity the caller may not see: the service's
	 * condition, 503, with no names and no numbers beyond when to come back.
	 */
	private static Rejection reducedCapacity(long retryAfter, RateLimitException ex) {
		return new Rejection(503, ProblemResponses.TEMPORARY_REDUCED_CAPACITY, SERVICE_UNAVAILABLE,
				"Capacity is temporarily reduced; retry after " + retryAfter + " s.", retryAfter, List.of(), ex);
	}

	private static long retryAfter(long micros) {
		return Math.max(1, RateLimitHeaders.seconds(micros));
	}

	private static List<String> disclosed(Disclosures request, List<String> policies) {
		List<String> named = new ArrayList<>(policies.size());
		for (String policy : policies) {
			if (request.contains(policy)) {
				named.add(policy);
			}
		}
		return named;
	}

}
