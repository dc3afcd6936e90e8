package dev.ratelimit;

import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.budget.Amounts;
import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.BudgetExceededException;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.budget.Reservation;
import dev.ratelimit.concurrency.ConcurrencyLimitExceededException;
import dev.ratelimit.concurrency.ConcurrencyLimiter;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.concurrency.Permit;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitRequest;
import dev.ratelimit.core.NamedLimits;
import dev.ratelimit.core.RateLimitExceededException;
import dev.ratelimit.core.RateLimitOutcome;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.RateLimiter;
import dev.ratelimit.key.KeyContext;

/**
 * The programmatic API: the configured limits of every kind, by name, in one
 * line each — for work the annotations cannot wrap (a loop, a stream, a job):
 *
 * <pre class="code">
 * limits.acquire("agent-runs", userId);                       // or RateLimitExceededException
 *
 * Reservation reservation = limits.reserve("tenant-daily", tenant, "0.20");
 * try {
 *     reservation.settle(Amounts.toMicrosRoundingUp(usage.costUsd()));
 * }
 * catch (RuntimeException ex) {
 *     reservation.release();
 *     throw ex;
 * }
 *
 * try (Permit permit = limits.permit("provider", null)) {     // the cap's shared permits
 *     return provider.complete(request);
 * }
 * </pre>
 *
 * Every limit applies with its configured key, failure mode and everything
 * else; the key given here is the caller's value (a user id, a tenant), not
 * an expression. A listed key's override applies; plans and exemptions are
 * evaluated on requests, so a limit with plans applies its default plan here. A name that is not configured is a programming error:
 * {@link IllegalArgumentException}, naming what is.
 */
public final class Limits {

	private final LimitRegistry registry;

	private final RateLimiter limiter;

	private final @Nullable CostBudgets budgets;

	private final ConcurrencyLimiter concurrency;

	/**
	 * Creates the API.
	 * @param registry the configured limits
	 * @param limiter decides rate limits
	 * @param budgets reserves and settles budgets; {@code null} when no budget is
	 * configured (every budget name is then unknown)
	 * @param concurrency hands out permits
	 */
	public Limits(LimitRegistry registry, RateLimiter limiter, @Nullable CostBudgets budgets,
			ConcurrencyLimiter concurrency) {
		this.registry = registry;
		this.limiter = limiter;
		this.budgets = budgets;
		this.concurrency = concurrency;
	}

	/**
	 * Takes one unit of a rate limit for a key, waiting for the call's turn when
	 * the policy is in wait mode.
	 * @param policy the policy's name
	 * @param key the caller's key, or {@code null} for the policy's {@code global} bucket when that is its
	 * key (the default), else its missing-key rule
	 * @return the outcome, allowed
	 * @throws RateLimitExceededException if the policy refuses
	 */
	public RateLimitOutcome acquire(String policy, @Nullable String key) {
		return acquire(policy, key, 1);
	}

	/**
	 * Takes units of a rate limit for a key, waiting for the call's turn when the
	 * policy is in wait mode.
	 * @param policy the policy's name
	 * @param key the caller's key, or {@code null} for the policy's {@code global} bucket when that is its
	 * key (the default), else its missing-key rule
	 * @param cost the units to take
	 * @return the outcome, allowed
	 * @throws RateLimitExceededException if the policy refuses
	 */
	public RateLimitOutcome acquire(String policy, @Nullable String key, long cost) {
		RateLimitPolicy rateLimit = find(this.registry.rateLimits(), policy, key);
		return this.limiter.acquireOrThrow(rateLimit, keyOf(rateLimit, key), cost);
	}

	/**
	 * Decides a rate limit for a key without throwing and without waiting: an
	 * allowed outcome of a shaping policy carries the wait for the caller to honour.
	 * @param policy the policy's name
	 * @param key the caller's key, or {@code null} for the policy's {@code global} bucket when that is its
	 * key (the default), else its missing-key rule
	 * @param cost the units to take
	 * @return the outcome; check {@link RateLimitOutcome#allowed()}
	 */
	public RateLimitOutcome tryAcquire(String policy, @Nullable String key, long cost) {
		RateLimitPolicy rateLimit = find(this.registry.rateLimits(), policy, key);
		return this.limiter.tryAcquire(List.of(new LimitRequest(rateLimit, keyOf(rateLimit, key), cost)));
	}

	/**
	 * Reserves an estimate against a budget, to settle to the actual cost or
	 * release once the work is done.
	 * @param budget the budget's name
	 * @param key whose budget (a tenant, a user), or {@code null} for a budget keyed {@code global}
	 * @param estimate the amount, a decimal in the budget's unit such as {@code 0.20}
	 * @return the reservation
	 * @throws BudgetExceededException if the estimate does not fit
	 */
	public Reservation reserve(String budget, @Nullable String key, String estimate) {
		BudgetPolicy policy = find(this.registry.budgets(), budget, key);
		return budgets().reserve(policy, keyOf(policy, key), Amounts.parseMicros(estimate));
	}

	/**
	 * Reports what a budget has spent, reserved and left for a key.
	 * @param budget the budget's name
	 * @param key whose budget
	 * @return the state, per window of the budget
	 */
	public BudgetDecision remaining(String budget, String key) {
		BudgetPolicy policy = find(this.registry.budgets(), budget, key);
		return budgets().remaining(policy, Objects.requireNonNull(keyOf(policy, key), "key"));
	}

	/**
	 * Takes a permit of a concurrency cap, waiting up to its max-wait.
	 * @param cap the cap's name
	 * @param key the caller's key, or {@code null} for the cap's shared permits (those its annotated
	 * calls take when its key is {@code global}, the default)
	 * @return the permit, to close (or release) when the work ends
	 * @throws ConcurrencyLimitExceededException if no permit freed in time
	 */
	public Permit permit(String cap, @Nullable String key) {
		ConcurrencyPolicy policy = find(this.registry.concurrency(), cap, key);
		return this.concurrency.acquire(policy, keyOf(policy, key));
	}

	/**
	 * The key a call through this API counts against: the one given, or, for
	 * {@code null} and a limit keyed {@code global} (the default), that key, so
	 * that the API and the annotations share the limit's one pool; a limit used
	 * both ways would otherwise allow twice its size. For {@code null} and any
	 * other key expression, {@code null}: a rate limit's missing-key rule, a
	 * cap's permits shared by keyless calls, a budget's missing key.
	 */
	private static @Nullable String keyOf(Limit limit, @Nullable String key) {
		if (key == null && KeyContext.GLOBAL.equals(limit.key().strip())) {
			return KeyContext.GLOBAL;
		}
		return key;
	}

	/**
	 * Finds a limit as it stands now, with the key's override or else the
	 * default plan: a call through this API has no request to name a plan from.
	 */
	/** The budgets' store: a budget is found only when budgets are configured, and then there is one. */
	private CostBudgets budgets() {
		return Objects.requireNonNull(this.budgets, "budgets are configured");
	}

	private static <L extends Limit> L find(NamedLimits<L> limits, String name, @Nullable String key) {
		return limits.live(name)
			.orElseThrow(() -> new IllegalArgumentException("No " + limits.kind().label() + " named '" + name
					+ "' is configured (configured: " + limits.names() + ")"))
			.current()
			.select(null, key);
	}

}
