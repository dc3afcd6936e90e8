package dev.ratelimit.key;

import java.lang.reflect.Method;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;

import dev.ratelimit.core.Limit;
import dev.ratelimit.core.RateLimitPolicy;

/**
 * Watches a limit's key at one place and warns, once, when it keeps coming
 * out missing: the first {@value #CALLS} calls all without a key is a key that
 * cannot be read there (a header no caller sends, a request not in reach of
 * the call), not a caller who left it out, and every call then goes to the
 * limit's missing-key rule. One warning naming the limit, its key and the
 * method, never one per call; once a key was seen, or the warning given, the
 * watch costs a read per call.
 */
final class MissingKeys {

	/** How many calls in a row, from the first, must miss their key before the warning. */
	static final int CALLS = 10;

	private static final Log logger = LogFactory.getLog(MissingKeys.class);

	/** Calls so far that all missed their key; {@code -1} once settled (a key seen, or the warning given). */
	private final AtomicInteger misses = new AtomicInteger();

	/**
	 * Notes one call's key.
	 * @param key the key, or {@code null} when missing
	 * @param limit the limit as it applied
	 * @param expression its key expression at this place
	 * @param context the call's evaluation context: the method, whether a request was in reach
	 */
	void seen(@Nullable String key, Limit limit, Expression expression, EvaluationContext context) {
		int missed = this.misses.get();
		if (missed < 0) {
			return;
		}
		if (key != null) {
			this.misses.set(-1);
			return;
		}
		// Never counted on from -1 (a racing call settled it): exactly one call sees CALLS.
		if (this.misses.updateAndGet(MissingKeys::next) == CALLS) {
			this.misses.set(-1);
			warn(limit, expression, context);
		}
	}

	private static int next(int misses) {
		return (misses < 0) ? misses : misses + 1;
	}

	private static void warn(Limit limit, Expression expression, EvaluationContext context) {
		Method method = (context instanceof LazyEvaluationContext lazy) ? lazy.method() : null;
		KeyContext keys = KeyExpressions.keys(context);
		boolean noRequest = keys == null || keys.request() == null;
		String where = (method != null) ? "method " + method.getDeclaringClass().getName() + "#" + method.getName()
				: "a route";
		logger.warn("The key of " + limit.kind().property(limit.name()) + " (" + expression.getExpressionString()
				+ ") came out missing on each of the first " + CALLS
				+ " calls of " + where + (noRequest ? ", which had no web request in reach" : "") + ": "
				+ rule(limit) + " applies to every such call. Check the key"
				+ ((method != null) ? ", and where the method is called from" : "") + " (this is said once)");
	}

	private static String rule(Limit limit) {
		if (limit instanceof RateLimitPolicy policy) {
			return switch (policy.missingKey()) {
				case SHARED -> "missing-key shared (one bucket for every caller without a key)";
				case ALLOW -> "missing-key allow (unlimited)";
				case REJECT -> "missing-key reject (refused)";
			};
		}
		return switch (limit.kind()) {
			case BUDGET -> "a budget's refusal of keyless calls";
			default -> "one count for every caller without a key";
		};
	}

}
