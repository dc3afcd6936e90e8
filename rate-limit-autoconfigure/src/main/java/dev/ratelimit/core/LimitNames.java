package dev.ratelimit.core;

import java.util.regex.Pattern;

/**
 * The rule of {@link Limit#checkName}, compiled once.
 */
final class LimitNames {

	static final Pattern PATTERN = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

	private LimitNames() {
	}

}
