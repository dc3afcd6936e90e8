package dev.ratelimit.web;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import dev.ratelimit.budget.BudgetExceededException;
import dev.ratelimit.concurrency.ConcurrencyLimitExceededException;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.core.InvalidCostException;
import dev.ratelimit.core.RateLimitBackendUnavailableException;
import dev.ratelimit.core.RateLimitException;
import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.core.RateLimitKeyMissingException;

/**
 * Writes the RFC 9457 {@code application/problem+json} responses of the HTTP
 * contract: 429 for a caller over its limit, 503 when a fail-closed policy's
 * backend is down, 400 for a missing key or an invalid cost. Every one is
 * marked {@code Cache-Control: no-store}. A body names only the limits
 * registered as disclosed for the request (see
 * {@link dev.ratelimit.core.Visibility}); a refusal by limits the caller may not
 * see reads as a temporary reduction of capacity, with no names.
 */
public final class ProblemResponses {

	/** Problem type of a caller over its limit. */
	public static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

	/** Problem type of a limiter that cannot decide. */
	public static final String TEMPORARY_REDUCED_CAPACITY = "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity";

	private final long unavailableRetryAfterSeconds;

	/**
	 * Creates a writer.
	 * @param unavailableRetryAfter the Retry-After of 503 responses, rounded up to whole seconds
	 */
	public ProblemResponses(java.time.Duration unavailableRetryAfter) {
		this.unavailableRetryAfterSeconds = Math.max(1,
				RateLimitHeaders.seconds(unavailableRetryAfter.toNanos() / 1_000L));
	}

	/**
	 * Writes the response for a limiter exception.
	 * @param request the request
	 * @param response the response, not yet committed
	 * @param ex the exception
	 * @throws IOException if the body cannot be written
	 */
	public void write(HttpServletRequest request, HttpServletResponse response, RateLimitException ex)
			throws IOException {
		if (ex instanceof RateLimitExceededException exceeded) {
			long retryAfter = retryAfter(response, exceeded.getRetryAfterMicros());
			List<String> named = disclosed(request, exceeded.getViolatedPolicies());
			if (named.isEmpty()) {
				reducedCapacity(request, response, 429, retryAfter);
				return;
			}
			write(request, response, 429, QUOTA_EXCEEDED, "Too Many Requests",
					"Rate limit exceeded; retry after " + retryAfter + " s.", named);
		}
		else if (ex instanceof BudgetExceededException budget) {
			long retryAfter = retryAfter(response, budget.getRetryAfterMicros());
			if (!Disclosures.contains(request, budget.getPolicy().name())) {
				reducedCapacity(request, response, 429, retryAfter);
				return;
			}
			write(request, response, 429, QUOTA_EXCEEDED, "Too Many Requests",
					"Budget '" + budget.getPolicy().name() + "' is spent; retry after " + retryAfter + " s.",
					budget.getViolatedPolicies());
		}
		else if (ex instanceof ConcurrencyLimitExceededException busy) {
			long retryAfter = retryAfter(response, busy.getRetryAfterMicros());
			boolean shared = busy.getPolicy().rejection() == ConcurrencyPolicy.Rejection.SERVICE_UNAVAILABLE;
			int status = shared ? 503 : 429;
			if (!Disclosures.contains(request, busy.getPolicy().name())) {
				reducedCapacity(request, response, status, retryAfter);
				return;
			}
			write(request, response, status, shared ? TEMPORARY_REDUCED_CAPACITY : QUOTA_EXCEEDED,
					shared ? "Service Unavailable" : "Too Many Requests", busy.getMessage() + ".",
					List.of(busy.getPolicy().name()));
		}
		else if (ex instanceof RateLimitBackendUnavailableException unavailable) {
			response.setHeader("Retry-After", Long.toString(this.unavailableRetryAfterSeconds));
			write(request, response, 503, TEMPORARY_REDUCED_CAPACITY, "Service Unavailable",
					"The rate limiter cannot decide right now; retry shortly.",
					disclosed(request, List.of(unavailable.getPolicy())));
		}
		else {
			String policy = (ex instanceof InvalidCostException cost) ? cost.getPolicy()
					: (ex instanceof RateLimitKeyMissingException missing) ? missing.getPolicy() : null;
			// The message names the limit and its capacity: only for a limit the caller may see.
			String detail = (policy == null || Disclosures.contains(request, policy)) ? ex.getMessage()
					: "The request's key or cost is invalid for a limit of this service.";
			write(request, response, 400, "about:blank", "Bad Request", detail, null);
		}
	}

	/**
	 * Answers a refusal by limits the caller may not see: no names, no numbers
	 * beyond when to come back, as a temporary reduction of capacity.
	 */
	private static void reducedCapacity(HttpServletRequest request, HttpServletResponse response, int status,
			long retryAfter) throws IOException {
		write(request, response, status, TEMPORARY_REDUCED_CAPACITY,
				(status == 503) ? "Service Unavailable" : "Too Many Requests",
				"Capacity is temporarily reduced; retry after " + retryAfter + " s.", null);
	}

	private static long retryAfter(HttpServletResponse response, long micros) {
		long seconds = Math.max(1, RateLimitHeaders.seconds(micros));
		response.setHeader("Retry-After", Long.toString(seconds));
		return seconds;
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

	private static void write(HttpServletRequest request, HttpServletResponse response, int status, String type,
			String title, String detail, List<String> policies) throws IOException {
		response.setStatus(status);
		response.setHeader("Cache-Control", "no-store");
		response.setContentType("application/problem+json");
		response.setCharacterEncoding(StandardCharsets.UTF_8.name());
		StringBuilder json = new StringBuilder(256);
		json.append("{\"type\":");
		string(json, type);
		json.append(",\"title\":");
		string(json, title);
		json.append(",\"status\":").append(status).append(",\"detail\":");
		string(json, detail);
		json.append(",\"instance\":");
		string(json, request.getRequestURI());
		if (policies != null && !policies.isEmpty()) {
			json.append(QUOTA_EXCEEDED.equals(type) ? ",\"violated-policies\":[" : ",\"policies\":[");
			for (int i = 0; i < policies.size(); i++) {
				if (i > 0) {
					json.append(',');
				}
				string(json, policies.get(i));
			}
			json.append(']');
		}
		json.append('}');
		response.getWriter().write(json.toString());
		response.flushBuffer();
	}

	private static void string(StringBuilder json, String value) {
		json.append('"');
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			switch (c) {
				case '"' -> json.append("\\\"");
				case '\\' -> json.append("\\\\");
				default -> {
					if (c < 0x20 || c == 0x2028 || c == 0x2029) {
						json.append(String.format("\\u%04x", (int) c));
					}
					else {
						json.append(c);
					}
				}
			}
		}
		json.append('"');
	}

}
