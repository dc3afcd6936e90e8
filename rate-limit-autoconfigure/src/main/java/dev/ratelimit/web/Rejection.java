package dev.ratelimit.web;

import java.util.List;
import java.util.Objects;

import dev.ratelimit.core.RateLimitException;

/**
 * A refusal as the caller may be told about it, handed to a
 * {@code RejectionHandler}: the HTTP contract's status, problem type, title and
 * detail, when to come back, and the limits that refused.
 * <p>
 * Every field but {@link #exception()} keeps the visibility rule of
 * {@link dev.ratelimit.core.Visibility}: {@link #policies()} lists only the
 * limits the caller may see, and {@link #detail()} names no other. A refusal
 * by limits the caller may not see is the service's condition, a temporary
 * reduction of capacity ({@code 503},
 * {@link ProblemTypes#TEMPORARY_REDUCED_CAPACITY}) with no names. The raw
 * exception names every limit involved, internal ones included: a handler that
 * shows anything taken from it to the caller gives up that rule.
 *
 * @param status the HTTP status: 429 for a caller over a limit it may see; 503
 * for a refusal by limits it may not see (shared capacity, a provider's pause),
 * a visible cap that protects a shared downstream, or a limiter that cannot
 * decide; 400 for a missing key or an invalid cost
 * @param type the RFC 9457 problem type: {@link ProblemTypes#QUOTA_EXCEEDED},
 * {@link ProblemTypes#TEMPORARY_REDUCED_CAPACITY} or {@code about:blank}
 * @param title the short, fixed text of the status, e.g. {@code Too Many Requests}
 * @param detail what happened, for a person to read
 * @param retryAfterSeconds the {@code Retry-After} to send, in whole seconds and at
 * least 1; 0 for a 400, which a retry does not cure
 * @param policies the names of the refusing limits the caller may see, in order
 * (the fail-closed policy, for a limiter that cannot decide); empty when none
 * may be named, which for a refusal means status 503
 * @param exception the limiter's exception, which names every limit involved
 */
public record Rejection(int status, String type, String title, String detail, long retryAfterSeconds,
		List<String> policies, RateLimitException exception) {

	/**
	 * Creates a rejection.
	 * @param status the HTTP status
	 * @param type the problem type
	 * @param title the title
	 * @param detail the detail
	 * @param retryAfterSeconds the Retry-After in seconds, 0 for none
	 * @param policies the visible refusing limits
	 * @param exception the limiter's exception
	 */
	public Rejection {
		Objects.requireNonNull(type, "type");
		Objects.requireNonNull(title, "title");
		Objects.requireNonNull(detail, "detail");
		Objects.requireNonNull(exception, "exception");
		if (retryAfterSeconds < 0) {
			throw new IllegalArgumentException("retryAfterSeconds cannot be negative: " + retryAfterSeconds);
		}
		policies = List.copyOf(policies);
	}

}
