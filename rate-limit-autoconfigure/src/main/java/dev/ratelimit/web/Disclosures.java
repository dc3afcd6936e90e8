package dev.ratelimit.web;

import java.util.HashSet;
import java.util.Set;

import jakarta.servlet.http.HttpServletRequest;

/**
 * The limits a request's response may tell its caller about, by name: those
 * whose {@link dev.ratelimit.core.Visibility} allows it where they were
 * applied to this request. The filter and the aspects register each limit as
 * they apply it; the header fields and the problem bodies show only registered
 * ones, so a limit nobody registered (an internal one, or one applied by code
 * outside them) stays unnamed.
 */
final class Disclosures {

	private static final String ATTRIBUTE = Disclosures.class.getName() + ".policies";

	private Disclosures() {
	}

	/**
	 * Allows a limit to be told to the caller of a request.
	 * @param request the request
	 * @param policy the limit's name
	 */
	@SuppressWarnings("unchecked")
	static void add(HttpServletRequest request, String policy) {
		Object existing = request.getAttribute(ATTRIBUTE);
		Set<String> policies;
		if (existing instanceof Set<?> set) {
			policies = (Set<String>) set;
		}
		else {
			policies = new HashSet<>(4);
			request.setAttribute(ATTRIBUTE, policies);
		}
		policies.add(policy);
	}

	/**
	 * Returns whether a limit may be told to the caller of a request.
	 * @param request the request
	 * @param policy the limit's name
	 * @return whether it was registered as disclosed
	 */
	static boolean contains(HttpServletRequest request, String policy) {
		return request.getAttribute(ATTRIBUTE) instanceof Set<?> set && set.contains(policy);
	}

}
