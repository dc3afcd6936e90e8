package dev.ratelimit.web;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import org.springframework.web.util.pattern.PathPattern;

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
 * parsed once per request. The same for every stack: a request reaches it as a
 * {@link WebExchange}.
 */
final class RouteMatcher {

	/** Literal segments of characters that need no encoding, optionally ending in {@code /**}. */
	private static final Pattern LITERAL = Pattern.compile("(/[A-Za-z0-9._~-]+)*(/\\*\\*)?");

	private final RouteRule route;

	/** The rule's policies and caps, a name listed twice kept once, as the filter applies them. */
	private final MatchedLimits limits;

	/** The literal part of the pattern ({@code /api} of {@code /api/**}), or {@code null} when it has none. */
	private final @Nullable String literal;

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

	/** @return the rule's path pattern */
	PathPattern pattern() {
		return this.route.pattern();
	}

	/** @return the rule's policies and caps, each name once */
	MatchedLimits limits() {
		return this.limits;
	}

	/**
	 * Returns whether the rule applies to a request, on any stack: the path is
	 * compared as a string where the pattern allows, parsed (once per request,
	 * by the exchange) otherwise.
	 * @param exchange the request
	 * @return whether the rule applies
	 */
	boolean matches(WebExchange exchange) {
		if (!this.route.methods().isEmpty() && !this.route.methods().contains(exchange.method())) {
			return false;
		}
		String literal = this.literal;
		String raw = (literal != null) ? exchange.plainPath() : null;
		if (raw != null && literal != null) {
			return this.below ? isAtOrBelow(raw, literal) : raw.equals(literal);
		}
		return this.route.pattern().matches(exchange.path());
	}

	/** {@code /api/**} matches {@code /api}, {@code /api/} and everything under it; {@code /**} everything. */
	private static boolean isAtOrBelow(String raw, String literal) {
		int length = literal.length();
		return raw.startsWith(literal) && (raw.length() == length || raw.charAt(length) == '/');
	}

}
