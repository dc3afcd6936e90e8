package dev.ratelimit.key;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.expression.EvaluationContext;

import dev.ratelimit.core.FirstTimes;
import dev.ratelimit.core.ProvisionalTakes;
import dev.ratelimit.core.RateLimitOutcome;

/**
 * Settles a call counted by outcome once it has ended, the same for annotated
 * methods and route rules: sets the outcome's variables, asks each policy's
 * {@link OutcomeRule} whether the call counts, and gives back the units of
 * those it does not count against. A rule that fails counts the call (the
 * safe side: the limit is never exceeded) and is logged.
 */
public final class OutcomeSettlement {

	/** The variable holding the method's return value (or its asynchronous result). */
	public static final String RESULT = "result";

	/** The variable holding what the method threw, or {@code null}. */
	public static final String EXCEPTION = "exception";

	/** The variable holding the response status of a route rule's request. */
	public static final String STATUS = "status";

	private static final Log logger = LogFactory.getLog(OutcomeSettlement.class);

	/** The policies whose rule has failed once already; bounded by the configured policy names. */
	private static final FirstTimes WARNED = new FirstTimes();

	private OutcomeSettlement() {
	}

	/**
	 * Settles the call.
	 * @param bound the policies applied to the call, with their rules
	 * @param outcome the call's decision, holding what it took provisionally
	 * @param context the call's evaluation context
	 * @param result the return value, or {@code null}
	 * @param exception what the call threw, or {@code null}
	 * @param status the response status, or {@code null} outside route rules
	 */
	public static void settle(List<BoundPolicy> bound, RateLimitOutcome outcome, EvaluationContext context,
			@Nullable Object result, @Nullable Throwable exception, @Nullable Integer status) {
		ProvisionalTakes provisional = outcome.provisional();
		if (provisional.isEmpty()) {
			return;
		}
		context.setVariable(RESULT, result);
		context.setVariable(EXCEPTION, exception);
		context.setVariable(STATUS, status);
		Map<String, OutcomeRule> rules = new HashMap<>();
		for (BoundPolicy policy : bound) {
			if (policy.countWhen() != null) {
				rules.putIfAbsent(policy.policy().name(), policy.countWhen());
			}
		}
		provisional.settle((name) -> counts(name, rules.get(name), context));
	}

	/**
	 * Gives back everything the call took provisionally: it was refused (by a
	 * later limit of the same call) before its work ran, so no outcome exists
	 * to count.
	 * @param outcome the call's decision
	 */
	public static void giveBackAll(RateLimitOutcome outcome) {
		outcome.provisional().settle((name) -> false);
	}

	private static boolean counts(String policy, @Nullable OutcomeRule rule, EvaluationContext context) {
		if (rule == null) {
			return true;
		}
		try {
			return rule.counts(context);
		}
		catch (RuntimeException ex) {
			String message = "Could not tell whether the call counts against policy '" + policy + "' (" + rule
					+ "); counting it: " + ex;
			// Once per policy at warning level: a rule that fails on every call would flood the log.
			if (WARNED.first(policy)) {
				logger.warn(message + " (further failures of this policy's rule are logged at debug level)");
			}
			else if (logger.isDebugEnabled()) {
				logger.debug(message);
			}
			return true;
		}
	}

}
