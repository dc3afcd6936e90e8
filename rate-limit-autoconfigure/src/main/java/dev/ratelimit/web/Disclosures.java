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
	 * Allows a limit to be told to the caller of a request. The first name is
	 * kept as it is; only a request with a second one pays for a set.
	 * @param request the request
	 * @param policy the limit's name
	 */
	@SuppressWarnings("unchecked")
	static void add(HttpServletRequest request, String policy) {
		Object existing = request.getAttribute(ATTRIBUTE);
		if (existing == null) {
			request.setAttribute(ATTRIBUTE, policy);
		}
		else if (existing instanceof String only) {
			if (!only.equals(policy)) {
				Set<String> policies = new HashSet<>(4);
				policies.add(only);
				policies.add(policy);
				request.setAttribute(ATTRIBUTE, policies);
			}
		}
		else {
			((Set<String>) existing).add(policy);
		}
	}

	/**
	 * Returns whether a limit may be told to the caller of a request.
	 * @param request the request
	 * @param policy the limit's name
	 * @return whether it was registered as disclosed
	 */
	static boolean contains(HttpServletRequest request, String policy) {
		Object registered = request.getAttribute(ATTRIBUTE);
		return (registered instanceof String only) ? only.equals(policy)
				: registered instanceof Set<?> set && set.contains(policy);
	}

}
