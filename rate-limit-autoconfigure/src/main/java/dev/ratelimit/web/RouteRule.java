package dev.ratelimit.web;

import java.util.List;
import java.util.Set;

import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;

import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.key.AppliedLimit;
import dev.ratelimit.key.BoundPolicy;

/**
 * A route rule from {@code rate-limit.routes}: requests whose path matches the
 * pattern and whose method is listed (or any method when none is) are limited
 * by the policies, before the body is read or a controller runs, and hold a
 * permit of each concurrency cap until their response is complete.
 *
 * @param pattern the path pattern, matched against the path within the application
 * @param methods upper-case HTTP methods; empty for every method
 * @param policies the rate-limit policies to apply
 * @param caps the concurrency caps (fixed or adaptive) a request holds a permit of while it runs
 */
public record RouteRule(PathPattern pattern, Set<String> methods, List<BoundPolicy> policies,
		List<AppliedLimit<ConcurrencyPolicy>> caps) {

	/**
	 * Creates a rule of rate-limit policies only.
	 * @param pattern the path pattern
	 * @param methods upper-case HTTP methods; empty for every method
	 * @param policies the policies to apply
	 */
	public RouteRule(PathPattern pattern, Set<String> methods, List<BoundPolicy> policies) {
		this(pattern, methods, policies, List.of());
	}

	/**
	 * Returns whether a request matches.
	 * @param method the HTTP method
	 * @param path the path within the application
	 * @return whether the rule applies
	 */
	public boolean matches(String method, PathContainer path) {
		return (this.methods.isEmpty() || this.methods.contains(method)) && this.pattern.matches(path);
	}

}
