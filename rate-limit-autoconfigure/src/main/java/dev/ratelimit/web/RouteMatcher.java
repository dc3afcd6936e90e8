package dev.ratelimit.web;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

import jakarta.servlet.http.HttpServletRequest;

import org.springframework.http.server.PathContainer;
import org.springframework.http.server.RequestPath;

import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.key.AppliedLimit;
import dev.ratelimit.key.BoundPolicy;

/**
 * Matches requests against route rules without parsing the path when it can:
 * the patterns most rules use, literal segments with or without a trailing
 * {@code /**} ({@code /api/**}, {@code /login}, {@code /**}), are compared with
 * the raw path as strings, which gives the pattern's own answer whenever the
 * raw path has nothing the parser would change: no {@code %} (decoded before
 * matching) and no {@code ;} (path parameters, removed before matching). Every
 * other pattern, and every other path, goes through
 * {@link org.springframework.web.util.pattern.PathPattern#matches} on the path
 * parsed once per request.
 */
final class RouteMatcher {

	/** Literal segments of characters that need no encoding, optionally ending in {@code /**}. */
	private static final Pattern LITERAL = Pattern.compile("(/[A-Za-z0-9._~-]+)*(/\\*\\*)?");

	private final RouteRule route;

	/** The rule's policies and caps, a name listed twice kept once, as the filter applies them. */
	private final MatchedLimits limits;

	/** The literal part of the pattern ({@code /api} of {@code /api/**}), or {@code null} when it has none. */
	private final String literal;

	/** Whether the pattern ends in {@code /**}: anything below the literal part matches too. */
	private final boolean below;

	RouteMatcher(RouteRule route) {
		this.route = route;
		List<BoundPolicy> distinct = new ArrayList<>();
		Set<String> names = new HashSet<>();
		for (BoundPolicy bound : route.policies()) {
			if (names.add(bound.policy().name())) {
				distinct.add(bound);
			}
		}
		List<AppliedLimit<ConcurrencyPolicy>> caps = new ArrayList<>();
		Set<String> capNames = new HashSet<>();
		for (AppliedLimit<ConcurrencyPolicy> cap : route.caps()) {
			if (capNames.add(cap.limit().name())) {
				caps.add(cap);
			}
		}
		this.limits = new MatchedLimits(List.copyOf(distinct), List.copyOf(caps));
		String pattern = route.pattern().getPatternString();
		if (!pattern.isEmpty() && LITERAL.matcher(pattern).matches()) {
			this.below = pattern.endsWith("/**");
			this.literal = this.below ? pattern.substring(0, pattern.length() - 3) : pattern;
		}
		else {
			this.below = false;
			this.literal = null;
		}
	}

	/** @return the rule's policies and caps, each name once */
	MatchedLimits limits() {
		return this.limits;
	}

	/**
	 * Returns whether the rule applies to a request.
	 * @param method the request's method
	 * @param request the request
	 * @param path the request's path, parsed on first need and kept for the next rule
	 * @return whether the rule applies
	 */
	boolean matches(String method, HttpServletRequest request, ParsedPath path) {
		if (!this.route.methods().isEmpty() && !this.route.methods().contains(method)) {
			return false;
		}
		String raw = (this.literal != null) ? path.raw(request) : null;
		if (raw != null) {
			return this.below ? isAtOrBelow(raw) : raw.equals(this.literal);
		}
		return this.route.pattern().matches(path.parsed(request));
	}

	/**
	 * Returns whether the rule applies to a request whose path is parsed already
	 * (a WebFlux request's): the same rule as for a servlet request.
	 * @param method the request's method
	 * @param path the request's path within the application
	 * @return whether the rule applies
	 */
	boolean matches(String method, PathContainer path) {
		if (!this.route.methods().isEmpty() && !this.route.methods().contains(method)) {
			return false;
		}
		String raw = path.value();
		if (this.literal != null && ParsedPath.isPlain(raw)) {
			return this.below ? isAtOrBelow(raw) : raw.equals(this.literal);
		}
		return this.route.pattern().matches(path);
	}

	/** {@code /api/**} matches {@code /api}, {@code /api/} and everything under it; {@code /**} everything. */
	private boolean isAtOrBelow(String raw) {
		int length = this.literal.length();
		return raw.startsWith(this.literal) && (raw.length() == length || raw.charAt(length) == '/');
	}

	/**
	 * A request's path within the application, as the raw string when the parser
	 * would not change it, and parsed when a rule needs that: each at most once
	 * per request.
	 */
	static final class ParsedPath {

		private boolean rawRead;

		private String raw;

		private PathContainer parsed;

		/**
		 * @return the path within the application when it holds no {@code %} nor {@code ;},
		 * else {@code null}
		 */
		String raw(HttpServletRequest request) {
			if (!this.rawRead) {
				this.raw = plainPathWithinApplication(request);
				this.rawRead = true;
			}
			return this.raw;
		}

		/** @return whether the path was parsed (for tests: the string comparison avoids it) */
		boolean isParsed() {
			return this.parsed != null;
		}

		PathContainer parsed(HttpServletRequest request) {
			if (this.parsed == null) {
				this.parsed = RequestPath.parse(request.getRequestURI(), request.getContextPath())
					.pathWithinApplication();
			}
			return this.parsed;
		}

		private static String plainPathWithinApplication(HttpServletRequest request) {
			String uri = request.getRequestURI();
			String context = request.getContextPath();
			if (uri == null || !isPlain(uri)) {
				return null;
			}
			if (context == null || context.isEmpty()) {
				return uri;
			}
			// A context path the parser would check and strip segment by segment: leave it the parser.
			return (uri.startsWith(context) && (uri.length() == context.length() || uri.charAt(context.length()) == '/'))
					? uri.substring(context.length()) : null;
		}

		static boolean isPlain(String path) {
			for (int i = 0; i < path.length(); i++) {
				char c = path.charAt(i);
				if (c == '%' || c == ';') {
					return false;
				}
			}
			return true;
		}

	}

}
