package dev.ratelimit.metrics;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import dev.ratelimit.budget.Amounts;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.LimitListener;
import dev.ratelimit.core.RateLimitException;

/**
 * Measures every kind of limit in Micrometer, with bounded tags: the kind, the
 * limit's name and the outcome, never the caller's key.
 * <ul>
 * <li>{@code rate.limit.decisions} ({@code kind}, {@code policy},
 * {@code outcome}): {@code allowed} and {@code denied} decisions of a store
 * (a rate limit's decision, a budget's reservation, a cap's permit),
 * {@code fallback} for calls a failure mode decided, {@code shadow} for the
 * would-be rejections of shadow policies;</li>
 * <li>{@code rate.limit.fallbacks} ({@code kind}, {@code policy},
 * {@code mode}): the calls each failure mode handled;</li>
 * <li>{@code rate.limit.store.latency} ({@code kind}, {@code outcome}): each
 * call to a store;</li>
 * <li>{@code rate.limit.budget.spent} ({@code budget}): costs charged, in the
 * budget's unit;</li>
 * <li>{@code rate.limit.plan.defaulted} ({@code kind}, {@code policy},
 * {@code reason}): calls decided by the default plan because their plan
 * expression named {@code none} or an {@code unknown} plan (the plan named is
 * not a tag: callers choose it);</li>
 * <li>{@code rate.limit.method.fallbacks} ({@code class}, {@code method},
 * {@code refusal}): refused calls that a limited method's fallback method
 * answered;</li>
 * <li>{@code rate.limit.give.backs} ({@code kind}, {@code policy},
 * {@code outcome}): units of calls counted by outcome that were
 * {@code given} back, or {@code failed} to be (they stay counted).</li>
 * </ul>
 * Meters are created once per name and tags; counting is a lock-free increment.
 */
public final class MicrometerLimitListener implements LimitListener {

	/** Name of the decision counter. */
	public static final String DECISIONS = "rate.limit.decisions";

	/** Name of the fallback counter. */
	public static final String FALLBACKS = "rate.limit.fallbacks";

	/** Name of the store latency timer. */
	public static final String STORE_LATENCY = "rate.limit.store.latency";

	/** Name of the counter of calls decided by a default plan. */
	public static final String PLAN_DEFAULTED = "rate.limit.plan.defaulted";

	/** Name of the counter of give-backs of calls counted by outcome. */
	public static final String GIVE_BACKS = "rate.limit.give.backs";

	/** Name of the budget spend counter, in the budget's unit. */
	public static final String BUDGET_SPENT = "rate.limit.budget.spent";

	/** Name of the counter of fallback methods called instead of throwing a refusal. */
	public static final String METHOD_FALLBACKS = "rate.limit.method.fallbacks";

	private final Supplier<MeterRegistry> registry;

	private final Map<String, Counter> counters = new ConcurrentHashMap<>();

	private final Map<String, Timer> timers = new ConcurrentHashMap<>();

	/**
	 * Creates a listener.
	 * @param registry supplies the registry, resolved on first use so that the
	 * listener can exist before the registry does
	 */
	public MicrometerLimitListener(Supplier<MeterRegistry> registry) {
		this.registry = registry;
	}

	@Override
	public void decided(Limit limit, boolean allowed, DecisionSource source) {
		switch (source) {
			case STORE -> count(DECISIONS, limit, "outcome", allowed ? "allowed" : "denied");
			// A local fallback was counted when the failure mode applied.
			case LOCAL_FALLBACK -> {
			}
			case SHADOW -> {
				if (!allowed) {
					count(DECISIONS, limit, "outcome", "shadow");
				}
			}
		}
	}

	@Override
	public void fellBack(Limit limit, FailureMode mode, RuntimeException cause) {
		count(DECISIONS, limit, "outcome", "fallback");
		count(FALLBACKS, limit, "mode", mode.name().toLowerCase());
	}

	@Override
	public void gaveBack(Limit limit, boolean succeeded) {
		count(GIVE_BACKS, limit, "outcome", succeeded ? "given" : "failed");
	}

	@Override
	public void storeCalled(LimitKind kind, long nanos, boolean succeeded) {
		String outcome = succeeded ? "success" : "failure";
		Timer timer = this.timers.get(kind.label() + outcome);
		if (timer == null) {
			MeterRegistry meters = this.registry.get();
			if (meters == null) {
				return;
			}
			timer = this.timers.computeIfAbsent(kind.label() + outcome, (k) -> Timer.builder(STORE_LATENCY)
				.description("Time a store of limits took to answer (one call per decision)")
				.tag("kind", kind.label())
				.tag("outcome", outcome)
				.register(meters));
		}
		timer.record(nanos, TimeUnit.NANOSECONDS);
	}

	@Override
	public void planDefaulted(Limit limit, boolean unknown) {
		count(PLAN_DEFAULTED, limit, "reason", unknown ? "unknown" : "none");
	}

	@Override
	public void charged(Limit budget, long amountMicros) {
		Counter counter = counter(BUDGET_SPENT, "budget:" + budget.name(), () -> Counter.builder(BUDGET_SPENT)
			.description("Costs charged to a budget, in its unit")
			.baseUnit((budget instanceof BudgetPolicy policy) ? policy.unit() : null)
			.tag("budget", budget.name()));
		if (counter != null) {
			counter.increment(amountMicros / (double) Amounts.MICROS_PER_UNIT);
		}
	}

	@Override
	public void fallbackCalled(Method method, RateLimitException refusal) {
		String type = method.getDeclaringClass().getName();
		String refused = refusal.getClass().getSimpleName();
		Counter counter = counter(METHOD_FALLBACKS, type + '#' + method.getName() + '\u0000' + refused,
				() -> Counter.builder(METHOD_FALLBACKS)
					.description("Refused calls answered by the limited method's fallback method")
					.tag("class", type)
					.tag("method", method.getName())
					.tag("refusal", refused));
		if (counter != null) {
			counter.increment();
		}
	}

	private void count(String name, Limit limit, String tag, String value) {
		Counter counter = counter(name, limit.name() + '\u0000' + value, () -> Counter.builder(name)
			.description(switch (name) {
				case DECISIONS -> "Decisions of limits by kind, name and outcome";
				case PLAN_DEFAULTED -> "Calls decided by the default plan: their plan was missing or unknown";
				case GIVE_BACKS -> "Give-backs of calls whose outcome did not count, given or failed";
				default -> "Calls decided by a failure mode while a store could not decide them";
			})
			.tag("kind", limit.kind().label())
			.tag("policy", limit.name())
			.tag(tag, value));
		if (counter != null) {
			counter.increment();
		}
	}

	private Counter counter(String name, String key, Supplier<Counter.Builder> builder) {
		Counter counter = this.counters.get(name + '\u0000' + key);
		if (counter == null) {
			MeterRegistry meters = this.registry.get();
			if (meters == null) {
				return null;
			}
			counter = this.counters.computeIfAbsent(name + '\u0000' + key, (k) -> builder.get().register(meters));
		}
		return counter;
	}

}
