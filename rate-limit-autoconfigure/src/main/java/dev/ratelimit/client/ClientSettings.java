package dev.ratelimit.client;

import java.net.URI;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;

/**
 * How the client of one provider behaves: the limits it keeps to, and how it
 * retries. Immutable; every value is checked here, naming the value.
 *
 * @param name the provider's name, as in {@code rate-limit.clients.<name>}
 * @param baseUrl the provider's base URL; requests of builders customized for
 * every client go through this provider's rules when their URL starts with it;
 * {@code null} for a provider bound by name only
 * @param rateLimit the rate-limit policy every attempt takes a unit of, or {@code null}
 * @param concurrency the concurrency cap every attempt holds a permit of, or {@code null}
 * @param maxAttempts the most attempts of one call, the first included (at least 1)
 * @param backoffMicros the backoff ceiling of the first retry, doubled per retry
 * @param maxBackoffMicros the highest backoff ceiling
 * @param deadlineMicros the longest a call may take, waits included
 * @param retryMethods the HTTP methods retried, upper case
 * @param pauseJitterMicros the most added at random to a provider's pause, so
 * that callers released by one pause do not all call at the same instant
 */
public record ClientSettings(String name, @Nullable URI baseUrl, @Nullable String rateLimit,
		@Nullable String concurrency, int maxAttempts, long backoffMicros, long maxBackoffMicros, long deadlineMicros,
		Set<String> retryMethods, long pauseJitterMicros) {

	/** The methods retried by default: those HTTP defines as idempotent (RFC 9110, 9.2.2). */
	public static final Set<String> IDEMPOTENT_METHODS = Set.of("GET", "HEAD", "OPTIONS", "PUT", "DELETE");

	/**
	 * Checks the settings.
	 * @throws IllegalArgumentException naming the value that is invalid
	 */
	public ClientSettings {
		require(maxAttempts >= 1, "maxAttempts must be at least 1: %s", maxAttempts);
		require(backoffMicros > 0, "backoff must be positive: %s us", backoffMicros);
		require(maxBackoffMicros >= backoffMicros, "maxBackoff (%s us) must be at least backoff (%s us)",
				maxBackoffMicros, backoffMicros);
		require(deadlineMicros > 0, "deadline must be positive: %s us", deadlineMicros);
		require(pauseJitterMicros >= 0, "pauseJitter must not be negative: %s us", pauseJitterMicros);
		Set<String> methods = new TreeSet<>();
		retryMethods.forEach((method) -> methods.add(method.toUpperCase(Locale.ROOT)));
		retryMethods = Set.copyOf(methods);
	}

	/**
	 * Returns whether calls with a method are retried.
	 * @param method the HTTP method
	 * @return whether a refused or unconnected call of that method is tried again
	 */
	public boolean retries(String method) {
		return this.retryMethods.contains(method.toUpperCase(Locale.ROOT));
	}

	/**
	 * Returns whether a request URL is one of this provider's.
	 * @param url the request URL
	 * @return whether the URL starts with the base URL (scheme, host, port and path)
	 */
	public boolean matches(URI url) {
		if (this.baseUrl == null) {
			return false;
		}
		String base = this.baseUrl.toString();
		String target = url.toString();
		if (!target.regionMatches(true, 0, base, 0, base.length())) {
			return false;
		}
		// http://host/v1 matches http://host/v1/x and http://host/v1?q, not http://host/v10.
		return target.length() == base.length() || base.endsWith("/") || "/?#".indexOf(target.charAt(base.length())) >= 0;
	}

	private static void require(boolean condition, String message, Object... values) {
		if (!condition) {
			throw new IllegalArgumentException(String.format(message, values));
		}
	}

}
