package dev.ratelimit.web;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import dev.ratelimit.budget.BudgetExceededException;
import dev.ratelimit.client.ProviderPausedException;
import dev.ratelimit.concurrency.ConcurrencyLimitExceededException;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.concurrency.LoadShedException;
import dev.ratelimit.core.InvalidCostException;
import dev.ratelimit.core.RateLimitBackendUnavailableException;
import dev.ratelimit.core.RateLimitException;
import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.core.RateLimitKeyMissingException;

/**
 * Decides what the caller of a request may be told about a limiter exception:
 * the {@link Rejection} of the HTTP contract, naming only the limits the
 * request disclosed. The one rule for every web stack: the servlet
 * {@code Rejections} and the reactive {@code ReactiveRejections} answer
 * through it. Free of servlet and reactive types, so that either stack loads it
 * without the other.
 */
public final class Refusals {

	private static final String TOO_MANY_REQUESTS = "Too Many Requests";

	private static final String SERVICE_UNAVAILABLE = "Service Unavailable";

	private final long unavailableRetryAfterSeconds;

	/**
	 * Creates the rule.
	 * @param unavailableRetryAfter the Retry-After of a limiter that cannot decide,
	 * rounded up to whole seconds
	 */
	public Refusals(Duration unavailableRetryAfter) {
		this.unavailableRetryAfterSeconds = Math.max(1,
				RateLimitHeaders.seconds(unavailableRetryAfter.toNanos() / 1_000L));
	}

	/**
	 * Describes a limiter exception for a request whose disclosed limits are
	 * known: the rule of {@code Rejections.describe}, for every kind of request.
	 * @param request the limits the request's caller may see
	 * @param ex the exception
	 * @return the rejection
	 */
	public Rejection describe(Disclosures request, RateLimitException ex) {
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
		if (ex instanceof LoadShedException shed) {
			// The service near overload, whoever asks: 503, naming nothing, with a wait spread over callers.
			long retryAfter = retryAfter(shed.getRetryAfterMicros());
			return new Rejection(503, ProblemTypes.TEMPORARY_REDUCED_CAPACITY, SERVICE_UNAVAILABLE,
					"The service is shedding load to stay up; retry after " + retryAfter + " s.", retryAfter, List.of(),
					ex);
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
			return new Rejection(503, ProblemTypes.TEMPORARY_REDUCED_CAPACITY, SERVICE_UNAVAILABLE,
					"The rate limiter cannot decide right now; retry shortly.", this.unavailableRetryAfterSeconds,
					disclosed(request, List.of(unavailable.getPolicy())), ex);
		}
		String policy = (ex instanceof InvalidCostException cost) ? cost.getPolicy()
				: (ex instanceof RateLimitKeyMissingException missing) ? missing.getPolicy() : null;
		// The message names the limit and its capacity: only for a limit the caller may see.
		String detail = (policy == null || request.contains(policy))
				? Objects.requireNonNull(ex.getMessage(), "a limiter's exception says what happened")
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
			return new Rejection(503, ProblemTypes.TEMPORARY_REDUCED_CAPACITY, SERVICE_UNAVAILABLE, detail,
					retryAfter, named, ex);
		}
		return new Rejection(429, ProblemTypes.QUOTA_EXCEEDED, TOO_MANY_REQUESTS, detail, retryAfter, named, ex);
	}

	/**
	 * Describes a refusal by capacity the caller may not see: the service's
	 * condition, 503, with no names and no numbers beyond when to come back.
	 */
	private static Rejection reducedCapacity(long retryAfter, RateLimitException ex) {
		return new Rejection(503, ProblemTypes.TEMPORARY_REDUCED_CAPACITY, SERVICE_UNAVAILABLE,
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
