package dev.ratelimit.web;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import jakarta.servlet.http.HttpServletRequest;

import dev.ratelimit.core.PolicyDecision;

/**
 * What a request's response may tell its caller about its limits: the limits
 * whose {@link dev.ratelimit.core.Visibility} allows it where they were
 * applied to this request, by name, and the decisions made for it so far,
 * which the header fields list. The filter and the aspects register each limit
 * as they apply it; the header fields and the problem bodies show only
 * registered ones, so a limit nobody registered (an internal one, or one
 * applied by code outside them) stays unnamed.
 * <p>
 * Both live in one request attribute, set once per limited request: every
 * attribute a request sets is a write to the container's attribute map.
 */
final class Disclosures {

	private static final String ATTRIBUTE = Disclosures.class.getName();

	/** The first name registered: most requests have one limit, and pay for no set. */
	private final String first;

	private Set<String> more;

	private List<PolicyDecision> decisions;

	private Disclosures(String first) {
		this.first = first;
	}

	/**
	 * Allows a limit to be told to the caller of a request.
	 * @param request the request
	 * @param policy the limit's name
	 */
	static void add(HttpServletRequest request, String policy) {
		Disclosures disclosures = of(request);
		if (disclosures == null) {
			request.setAttribute(ATTRIBUTE, new Disclosures(policy));
		}
		else if (!disclosures.first.equals(policy)) {
			if (disclosures.more == null) {
				disclosures.more = new HashSet<>(4);
			}
			disclosures.more.add(policy);
		}
	}

	/**
	 * Returns whether a limit may be told to the caller of a request.
	 * @param request the request
	 * @param policy the limit's name
	 * @return whether it was registered as disclosed
	 */
	static boolean contains(HttpServletRequest request, String policy) {
		Disclosures disclosures = of(request);
		return disclosures != null && (disclosures.first.equals(policy)
				|| (disclosures.more != null && disclosures.more.contains(policy)));
	}

	/**
	 * Returns the decisions of disclosed limits made for a request so far, in
	 * the order the header fields list them, for the caller to change.
	 * @param request a request with at least one disclosed limit
	 * @return its decisions
	 * @throws IllegalStateException if no limit of the request was disclosed
	 */
	static List<PolicyDecision> decisions(HttpServletRequest request) {
		Disclosures disclosures = of(request);
		if (disclosures == null) {
			throw new IllegalStateException("No limit of this request was disclosed");
		}
		if (disclosures.decisions == null) {
			disclosures.decisions = new ArrayList<>(2);
		}
		return disclosures.decisions;
	}

	private static Disclosures of(HttpServletRequest request) {
		return (request.getAttribute(ATTRIBUTE) instanceof Disclosures disclosures) ? disclosures : null;
	}

}
