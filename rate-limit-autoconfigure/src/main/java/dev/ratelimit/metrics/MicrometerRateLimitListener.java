package dev.ratelimit.metrics;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import dev.ratelimit.budget.Amounts;
import dev.ratelimit.budget.BudgetListener;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.RateLimitListener;
import dev.ratelimit.core.RateLimitPolicy;

/**
 * Counts decisions in Micrometer, with bounded tags: the policy name and the
 * outcome, never the caller's key.
 * <ul>
 * <li>{@code rate.limit.decisions} (tags {@code policy}, {@code outcome}):
 * {@code allowed} and {@code denied} for decisions of the backend,
 * {@code fallback} for calls decided by a failure mode while the backend was
 * unavailable, {@code shadow} for the would-be rejections of shadow
 * policies;</li>
 * <li>{@code rate.limit.fallbacks} (tags {@code policy}, {@code mode}): the
 * calls each failure mode ({@code open}, {@code closed}, {@code local})
 * handled.</li>
 * </ul>
 * Counters are created once per policy and outcome; counting is a lock-free
 * increment.
 */
public final class MicrometerRateLimitListener implements RateLimitListener, BudgetListener {

	/** Name of the decision counter. */
	public static final String DECISIONS = "rate.limit.decisions";

	/** Name of the fallback counter. */
	public static final String FALLBACKS = "rate.limit.fallbacks";

	/** Name of the backend latency timer. */
	public static final String BACKEND_LATENCY = "rate.limit.backend.latency";

	/** Name of the budget spend counter, in the budget's unit. */
	public static final String BUDGET_SPENT = "rate.limit.budget.spent";

	/** Name of the budget refusal counter. */
	public static final String BUDGET_REFUSALS = "rate.limit.budget.refusals";

	private volatile Timer backendSuccess;

	private volatile Timer backendFailure;

	private final Map<String, Counter> budgetCounters = new ConcurrentHashMap<>();

	private final Supplier<MeterRegistry> registry;

	private final Map<String, Map<String, Counter>> counters = new ConcurrentHashMap<>();

	/**
	 * Creates a listener.
	 * @param registry supplies the registry, resolved on first use so that the
	 * listener can exist before the registry does
	 */
	public MicrometerRateLimitListener(Supplier<MeterRegistry> registry) {
		this.registry = registry;
	}

	@Override
	public void decided(RateLimitPolicy policy, Decision decision, DecisionSource source) {
		switch (source) {
			case BACKEND -> count(DECISIONS, policy, "outcome", decision.allowed() ? "allowed" : "denied");
			case LOCAL_FALLBACK -> {
				count(DECISIONS, policy, "outcome", "fallback");
				count(FALLBACKS, policy, "mode", "local");
			}
			case SHADOW -> {
				if (!decision.allowed()) {
					count(DECISIONS, policy, "outcome", "shadow");
				}
			}
		}
	}

	@Override
	public void failedOver(RateLimitPolicy policy, FailureMode mode, RuntimeException cause) {
		count(DECISIONS, policy, "outcome", "fallback");
		count(FALLBACKS, policy, "mode", (mode == FailureMode.CLOSED) ? "closed" : "open");
	}

	@Override
	public void backendCalled(long nanos, boolean succeeded) {
		Timer timer = succeeded ? this.backendSuccess : this.backendFailure;
		if (timer == null) {
			MeterRegistry meters = this.registry.get();
			if (meters == null) {
				return;
			}
			timer = Timer.builder(BACKEND_LATENCY)
				.description("Time the rate limit backend took to decide")
				.tag("outcome", succeeded ? "success" : "failure")
				.register(meters);
			if (succeeded) {
				this.backendSuccess = timer;
			}
			else {
				this.backendFailure = timer;
			}
		}
		timer.record(nanos, TimeUnit.NANOSECONDS);
	}

	@Override
	public void refused(BudgetPolicy policy) {
		Counter counter = budgetCounter(BUDGET_REFUSALS, policy, "Reservations a budget refused");
		if (counter != null) {
			counter.increment();
		}
	}

	@Override
	public void settled(BudgetPolicy policy, long actualMicros) {
		Counter counter = budgetCounter(BUDGET_SPENT, policy, "Costs charged to a budget, in its unit");
		if (counter != null) {
			counter.increment(actualMicros / (double) Amounts.MICROS_PER_UNIT);
		}
	}

	private Counter budgetCounter(String name, BudgetPolicy policy, String description) {
		Counter counter = this.budgetCounters.get(name + policy.name());
		if (counter == null) {
			MeterRegistry meters = this.registry.get();
			if (meters == null) {
				return null;
			}
			counter = this.budgetCounters.computeIfAbsent(name + policy.name(), (k) -> Counter.builder(name)
				.description(description)
				.baseUnit(BUDGET_SPENT.equals(name) ? policy.unit() : null)
				.tag("budget", policy.name())
				.register(meters));
		}
		return counter;
	}

	private void count(String name, RateLimitPolicy policy, String tag, String value) {
		Map<String, Counter> byValue = this.counters.computeIfAbsent(policy.name(), (p) -> new ConcurrentHashMap<>());
		Counter counter = byValue.get(name + value);
		if (counter == null) {
			MeterRegistry meters = this.registry.get();
			if (meters == null) {
				return;
			}
			counter = byValue.computeIfAbsent(name + value, (k) -> Counter.builder(name)
				.description(DECISIONS.equals(name) ? "Rate limit decisions by policy and outcome"
						: "Calls decided by a failure mode while the rate limit backend was unavailable")
				.tag("policy", policy.name())
				.tag(tag, value)
				.register(meters));
		}
		counter.increment();
	}

}
