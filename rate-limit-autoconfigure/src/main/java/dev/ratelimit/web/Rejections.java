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
	 * @param request the request
	 * @param ex the exception
	 * @return the rejection
	 */
	public Rejection describe(HttpServletRequest request, RateLimitException ex) {
		if (ex instanceof RateLimitExceededException exceeded) {
			long retryAfter = retryAfter(exceeded.getRetryAfterMicros());
			List<String> named = disclosed(request, exceeded.getViolatedPolicies());
			return named.isEmpty() ? reducedCapacity(429, retryAfter, ex)
					: new Rejection(429, ProblemResponses.QUOTA_EXCEEDED, TOO_MANY_REQUESTS,
							"Rate limit exceeded; retry after " + retryAfter + " s.", retryAfter, named, ex);
		}
		if (ex instanceof BudgetExceededException budget) {
			long retryAfter = retryAfter(budget.getRetryAfterMicros());
			String name = budget.getPolicy().name();
			return !Disclosures.contains(request, name) ? reducedCapacity(429, retryAfter, ex)
					: new Rejection(429, ProblemResponses.QUOTA_EXCEEDED, TOO_MANY_REQUESTS,
							"Budget '" + name + "' is spent; retry after " + retryAfter + " s.", retryAfter,
							List.of(name), ex);
		}
		if (ex instanceof ConcurrencyLimitExceededException busy) {
			return busy(request, busy);
		}
		if (ex instanceof ProviderPausedException paused) {
			// A provider behind the service said "not now": the caller sees reduced capacity, never the provider.
			return reducedCapacity(503, retryAfter(paused.getRetryAfterMicros()), ex);
		}
		if (ex instanceof RateLimitBackendUnavailableException unavailable) {
			return new Rejection(503, ProblemResponses.TEMPORARY_REDUCED_CAPACITY, SERVICE_UNAVAILABLE,
					"The rate limiter cannot decide right now; retry shortly.", this.unavailableRetryAfterSeconds,
					disclosed(request, List.of(unavailable.getPolicy())), ex);
		}
		String policy = (ex instanceof InvalidCostException cost) ? cost.getPolicy()
				: (ex instanceof RateLimitKeyMissingException missing) ? missing.getPolicy() : null;
		// The message names the limit and its capacity: only for a limit the caller may see.
		String detail = (policy == null || Disclosures.contains(request, policy)) ? ex.getMessage()
				: "The request's key or cost is invalid for a limit of this service.";
		return new Rejection(400, "about:blank", "Bad Request", detail, 0, List.of(), ex);
	}

	private static Rejection busy(HttpServletRequest request, ConcurrencyLimitExceededException busy) {
		long retryAfter = retryAfter(busy.getRetryAfterMicros());
		boolean shared = busy.getPolicy().rejection() == ConcurrencyPolicy.Rejection.SERVICE_UNAVAILABLE;
		int status = shared ? 503 : 429;
		if (!Disclosures.contains(request, busy.getPolicy().name())) {
			return reducedCapacity(status, retryAfter, busy);
		}
		return new Rejection(status,
				shared ? ProblemResponses.TEMPORARY_REDUCED_CAPACITY : ProblemResponses.QUOTA_EXCEEDED,
				shared ? SERVICE_UNAVAILABLE : TOO_MANY_REQUESTS, busy.getMessage() + ".", retryAfter,
				List.of(busy.getPolicy().name()), busy);
	}

	/**
	 * Describes a refusal by limits the caller may not see: no names, no numbers
	 * beyond when to come back, as a temporary reduction of capacity.
	 */
	private static Rejection reducedCapacity(int status, long retryAfter, RateLimitException ex) {
		return new Rejection(status, ProblemResponses.TEMPORARY_REDUCED_CAPACITY,
				(status == 503) ? SERVICE_UNAVAILABLE : TOO_MANY_REQUESTS,
				"Capacity is temporarily reduced; retry after " + retryAfter + " s.", retryAfter, List.of(), ex);
	}

	private static long retryAfter(long micros) {
		return Math.max(1, RateLimitHeaders.seconds(micros));
	}

	private static List<String> disclosed(HttpServletRequest request, List<String> policies) {
		List<String> named = new ArrayList<>(policies.size());
		for (String policy : policies) {
			if (Disclosures.contains(request, policy)) {
				named.add(policy);
			}
		}
		return named;
	}

}
