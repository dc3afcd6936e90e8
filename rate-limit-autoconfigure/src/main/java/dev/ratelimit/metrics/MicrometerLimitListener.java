package dev.ratelimit.metrics;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Supplier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;

import dev.ratelimit.budget.Amounts;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.concurrency.Priority;
import dev.ratelimit.core.FailureMode;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitDefinition;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.LimitListener;
import dev.ratelimit.core.PerLimit;
import dev.ratelimit.core.RateLimitException;
import dev.ratelimit.core.RateLimitPolicy;

/**
 * Measures every kind of limit in Micrometer, with bounded tags: the kind, the
 * limit's name and the outcome, never the caller's key.
 * <ul>
 * <li>{@code rate.limit.decisions} ({@code kind}, {@code policy},
 * {@code outcome}): {@code allowed} and {@code denied} decisions of a store
 * (a rate limit's decision, a budget's reservation, a cap's permit),
 * {@code fallback} for calls a failure mode decided, {@code shadow} for the
 * would-be rejections of shadow policies;</li>
 * <li>{@code rate.limit.near.limit} ({@code kind}, {@code policy}): allowed
 * decisions of a store or of a local fallback that left the caller's key less
 * than the near-limit share of its allowance (by default less than 20%
 * left): the callers about to be refused, before they are. A concurrency cap
 * cannot say what a key has left, so caps never count here;</li>
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
 * {@code given} back, or {@code failed} to be (they stay counted);</li>
 * <li>{@code rate.limit.concurrency.shed} ({@code policy}, {@code priority},
 * {@code outcome}): calls an adaptive cap {@code shed}, or would have shed in
 * {@code shadow} mode, by class.</li>
 * </ul>
 * Meters are created once per name and tags and found again without building
 * a string; counting is a lock-free increment. {@link #registerAtZero} creates
 * a limit's counters before its first event, so that its first event is an
 * increase a monitoring system can see.
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

	/** Name of the counter of calls adaptive caps shed, by class. */
	public static final String SHED = "rate.limit.concurrency.shed";

	/** Name of the counter of allowed decisions that left their key near its limit. */
	public static final String NEAR_LIMIT = "rate.limit.near.limit";

	/** Share of a key's allowance, in percent, whose use makes a decision near its limit, by default. */
	public static final int DEFAULT_NEAR_LIMIT_PERCENT = 80;

	/** A multiplication by 100 of a number up to this one cannot overflow. */
	private static final long EXACT_PERCENT_LIMIT = Long.MAX_VALUE / 100;

	private final Supplier<MeterRegistry> registry;

	/**
	 * Per limit, the counters of {@link LimitCounter} by ordinal, each registered
	 * on first use: found without building a string.
	 */
	private final PerLimit<AtomicReferenceArray<Counter>> limitCounters;

	/** Store latency timers by kind and outcome: {@code kind.ordinal() * 2}, plus 1 for a failure. */
	private final AtomicReferenceArray<Timer> timers = new AtomicReferenceArray<>(LimitKind.values().length * 2);

	/**
	 * Per adaptive cap, by priority, the counters of calls shed ({@code [0]}) and
	 * shed in shadow ({@code [1]}): a flood of shed calls builds no string.
	 */
	private final PerLimit<Map<String, AtomicReferenceArray<Counter>>> shedCounters = new PerLimit<>(
			(cap) -> new ConcurrentHashMap<>());

	/** Per fallback method, by the refusal's class, the counter of its calls. */
	private final Map<Method, Map<Class<?>, Counter>> fallbackCounters = new ConcurrentHashMap<>();

	/** What a decision may leave, in percent of the allowance, and not be near the limit: 100 - near-limit. */
	private final long leftPercent;

	/**
	 * Creates a listener whose decisions are near their limit once they used
	 * {@value #DEFAULT_NEAR_LIMIT_PERCENT}% of it.
	 * @param registry supplies the registry, resolved on first use so that the
	 * listener can exist before the registry does
	 */
	public MicrometerLimitListener(Supplier<MeterRegistry> registry) {
		this(registry, DEFAULT_NEAR_LIMIT_PERCENT);
	}

	/**
	 * Creates a listener.
	 * @param registry supplies the registry, resolved on first use so that the
	 * listener can exist before the registry does
	 * @param nearLimitPercent share of a key's allowance, in percent from 1 to
	 * 99, beyond whose use an allowed decision counts as near the limit
	 */
	public MicrometerLimitListener(Supplier<MeterRegistry> registry, int nearLimitPercent) {
		if (nearLimitPercent < 1 || nearLimitPercent > 99) {
			throw new IllegalArgumentException(
					"nearLimitPercent must be between 1 and 99: " + nearLimitPercent);
		}
		this.registry = registry;
		this.leftPercent = 100 - nearLimitPercent;
		this.limitCounters = new PerLimit<>((limit) -> new AtomicReferenceArray<>(LimitCounter.COUNT));
	}

	/**
	 * Registers at 0 every counter of a limit that its events can increase, before
	 * the first one. Prometheus takes a counter's first scraped value as its
	 * start: a counter created at its first increment already holds it when
	 * first scraped, so {@code increase(...)} reads 0 and the first burst after
	 * a start is never seen. Counters that no event of the limit can increase are
	 * left out: {@code allowed} and {@code denied} of a shadow policy (its
	 * decisions are counted as {@code shadow}), {@code denied} of a shadow cap
	 * (it admits every call), {@code shadow} of an enforced limit, near-limit
	 * decisions of shadow policies and of caps, plan defaults of a
	 * limit without a plan expression, give-backs of a policy that cannot be
	 * counted by outcome, fallbacks where no store can fail (and of failure modes
	 * other than the limit's). A counter an event needs later is still created
	 * then, as before. Bounded by the limits set up, never by keys.
	 * @param definition the limit as set up, with its plan expression
	 * @param storeCanFail whether a store outside this process decides the limit,
	 * so that its failure mode may decide its calls
	 */
	public void registerAtZero(LimitDefinition<?> definition, boolean storeCanFail) {
		Limit limit = definition.limit();
		for (LimitCounter which : LimitCounter.values()) {
			if (which.counts(limit, definition.planExpression() != null, storeCanFail)) {
				counter(limit, which);
			}
		}
		if (limit instanceof ConcurrencyPolicy cap && cap.isAdaptive()) {
			for (Priority priority : Priority.values()) {
				shedCounter(cap, priority.label(), cap.shadow());
			}
		}
	}

	@Override
	public void decided(Limit limit, @Nullable String key, long units, boolean allowed, long remaining,
			long capacity, DecisionSource source) {
		decided(limit, allowed, source);
		// A shadow decision enforces nothing: its callers are never refused, so never about to be.
		if (allowed && source != DecisionSource.SHADOW && nearLimit(remaining, capacity)) {
			count(limit, LimitCounter.NEAR_LIMIT);
		}
	}

	/**
	 * Whether a decision that left {@code remaining} of {@code capacity} left less
	 * than the share not near the limit; never when either is unknown.
	 */
	private boolean nearLimit(long remaining, long capacity) {
		if (remaining < 0 || capacity <= 0) {
			return false;
		}
		if (capacity <= EXACT_PERCENT_LIMIT && remaining <= EXACT_PERCENT_LIMIT) {
			// Exact: 20 left of 100 is not less than 20%, however 0.2 rounds.
			return remaining * 100 < this.leftPercent * capacity;
		}
		return remaining * 100.0 < this.leftPercent * (double) capacity;
	}

	@Override
	public void decided(Limit limit, boolean allowed, DecisionSource source) {
		switch (source) {
			case STORE -> count(limit, allowed ? LimitCounter.ALLOWED : LimitCounter.DENIED);
			// A local fallback was counted when the failure mode applied.
			case LOCAL_FALLBACK -> {
			}
			case SHADOW -> {
				if (!allowed) {
					count(limit, LimitCounter.SHADOW);
				}
			}
		}
	}

	@Override
	public void fellBack(Limit limit, FailureMode mode, RuntimeException cause) {
		count(limit, LimitCounter.FALLBACK);
		count(limit, switch (mode) {
			case OPEN -> LimitCounter.FALLBACK_OPEN;
			case CLOSED -> LimitCounter.FALLBACK_CLOSED;
			case LOCAL -> LimitCounter.FALLBACK_LOCAL;
		});
	}

	@Override
	public void gaveBack(Limit limit, boolean succeeded) {
		count(limit, succeeded ? LimitCounter.GIVEN_BACK : LimitCounter.GIVE_BACK_FAILED);
	}

	@Override
	public void storeCalled(LimitKind kind, long nanos, boolean succeeded) {
		int index = kind.ordinal() * 2 + (succeeded ? 0 : 1);
		Timer timer = this.timers.get(index);
		if (timer == null) {
			MeterRegistry meters = this.registry.get();
			if (meters == null) {
				return;
			}
			// Registering twice in a race is harmless: the registry hands out one timer per name and tags.
			timer = Timer.builder(STORE_LATENCY)
				.description("Time a store of limits took to answer (one call per decision)")
				.tag("kind", kind.label())
				.tag("outcome", succeeded ? "success" : "failure")
				.register(meters);
			this.timers.set(index, timer);
		}
		timer.record(nanos, TimeUnit.NANOSECONDS);
	}

	@Override
	public void planDefaulted(Limit limit, boolean unknown) {
		count(limit, unknown ? LimitCounter.PLAN_UNKNOWN : LimitCounter.PLAN_NONE);
	}

	@Override
	public void charged(Limit budget, long amountMicros) {
		Counter counter = counter(budget, LimitCounter.SPENT);
		if (counter != null) {
			counter.increment(amountMicros / (double) Amounts.MICROS_PER_UNIT);
		}
	}

	@Override
	public void fallbackCalled(Method method, RateLimitException refusal) {
		Map<Class<?>, Counter> byRefusal = this.fallbackCounters.get(method);
		if (byRefusal == null) {
			byRefusal = this.fallbackCounters.computeIfAbsent(method, (m) -> new ConcurrentHashMap<>());
		}
		Counter counter = byRefusal.get(refusal.getClass());
		if (counter == null) {
			MeterRegistry meters = this.registry.get();
			if (meters == null) {
				return;
			}
			counter = byRefusal.computeIfAbsent(refusal.getClass(), (refused) -> Counter.builder(METHOD_FALLBACKS)
				.description("Refused calls answered by the limited method's fallback method")
				.tag("class", method.getDeclaringClass().getName())
				.tag("method", method.getName())
				.tag("refusal", refused.getSimpleName())
				.register(meters));
		}
		counter.increment();
	}

	@Override
	public void shed(Limit cap, String priority, boolean shadow) {
		Counter counter = shedCounter(cap, priority, shadow);
		if (counter != null) {
			counter.increment();
		}
	}

	/** The cap's counter of a class's calls shed, registered on first use; {@code null} while there is no registry. */
	private @Nullable Counter shedCounter(Limit cap, String priority, boolean shadow) {
		Map<String, AtomicReferenceArray<Counter>> byPriority = this.shedCounters.of(cap);
		AtomicReferenceArray<Counter> counters = byPriority.get(priority);
		if (counters == null) {
			counters = byPriority.computeIfAbsent(priority, (p) -> new AtomicReferenceArray<>(2));
		}
		int index = shadow ? 1 : 0;
		Counter counter = counters.get(index);
		if (counter == null) {
			MeterRegistry meters = this.registry.get();
			if (meters == null) {
				return null;
			}
			// Registering twice in a race is harmless: the registry hands out one counter per name and tags.
			counter = Counter.builder(SHED)
				.description("Calls an adaptive concurrency cap shed (or would have, in shadow mode), by class")
				.tag("policy", cap.name())
				.tag("priority", priority)
				.tag("outcome", shadow ? "shadow" : "shed")
				.register(meters);
			counters.set(index, counter);
		}
		return counter;
	}

	/** Counts one event of a limit: a map look-up by the limit's name and an increment. */
	private void count(Limit limit, LimitCounter which) {
		Counter counter = counter(limit, which);
		if (counter != null) {
			counter.increment();
		}
	}

	/** The limit's counter, registered on first use; {@code null} while there is no registry. */
	private @Nullable Counter counter(Limit limit, LimitCounter which) {
		AtomicReferenceArray<Counter> counters = this.limitCounters.of(limit);
		Counter counter = counters.get(which.ordinal());
		if (counter == null) {
			MeterRegistry meters = this.registry.get();
			if (meters == null) {
				return null;
			}
			// Registering twice in a race is harmless: the registry hands out one counter per name and tags.
			counter = which.builder(limit).register(meters);
			counters.set(which.ordinal(), counter);
		}
		return counter;
	}

	/**
	 * Every counter kept per limit: the meter, the tag that tells its series
	 * apart besides kind and policy, and that tag's value (none for a meter of
	 * one series per limit).
	 */
	private enum LimitCounter {

		ALLOWED(DECISIONS, "outcome", "allowed"),

		DENIED(DECISIONS, "outcome", "denied"),

		FALLBACK(DECISIONS, "outcome", "fallback"),

		SHADOW(DECISIONS, "outcome", "shadow"),

		FALLBACK_OPEN(FALLBACKS, "mode", "open"),

		FALLBACK_CLOSED(FALLBACKS, "mode", "closed"),

		FALLBACK_LOCAL(FALLBACKS, "mode", "local"),

		PLAN_UNKNOWN(PLAN_DEFAULTED, "reason", "unknown"),

		PLAN_NONE(PLAN_DEFAULTED, "reason", "none"),

		GIVEN_BACK(GIVE_BACKS, "outcome", "given"),

		GIVE_BACK_FAILED(GIVE_BACKS, "outcome", "failed"),

		NEAR_LIMIT(MicrometerLimitListener.NEAR_LIMIT, null, null),

		SPENT(BUDGET_SPENT, null, null);

		static final int COUNT = values().length;

		private final String meter;

		private final @Nullable String tag;

		private final @Nullable String value;

		LimitCounter(String meter, @Nullable String tag, @Nullable String value) {
			this.meter = meter;
			this.tag = tag;
			this.value = value;
		}

		/**
		 * Whether an event of the limit can increase this counter.
		 * @param limit the limit
		 * @param planned whether the limit chooses plans by an expression
		 * @param storeCanFail whether a store that can fail decides it
		 */
		boolean counts(Limit limit, boolean planned, boolean storeCanFail) {
			// A shadow policy is decided apart from its calls: its decisions count as shadow ones alone. A shadow
			// cap admits every call (allowed) and counts those it would have shed as shadow ones.
			boolean shadowPolicy = limit instanceof RateLimitPolicy policy && policy.shadow();
			boolean shadowCap = limit instanceof ConcurrencyPolicy cap && cap.shadow();
			return switch (this) {
				case ALLOWED -> !shadowPolicy;
				case DENIED -> !shadowPolicy && !shadowCap;
				case SHADOW -> shadowPolicy || shadowCap;
				case FALLBACK -> storeCanFail;
				case FALLBACK_OPEN -> storeCanFail && limit.failureMode() == FailureMode.OPEN;
				case FALLBACK_CLOSED -> storeCanFail && limit.failureMode() == FailureMode.CLOSED;
				case FALLBACK_LOCAL -> storeCanFail && limit.failureMode() == FailureMode.LOCAL;
				case PLAN_UNKNOWN, PLAN_NONE -> planned;
				// Counting by outcome is chosen where the policy applies; a policy that allows it may be.
				case GIVEN_BACK, GIVE_BACK_FAILED ->
					limit instanceof RateLimitPolicy policy && policy.outcomeCountingProblem() == null;
				case NEAR_LIMIT -> !shadowPolicy && limit.kind() != LimitKind.CONCURRENCY;
				case SPENT -> limit.kind() == LimitKind.BUDGET;
			};
		}

		Counter.Builder builder(Limit limit) {
			if (this == SPENT) {
				// A budget's own meter: named by the budget alone, counted in its unit.
				return Counter.builder(BUDGET_SPENT)
					.description("Costs charged to a budget, in its unit")
					.baseUnit((limit instanceof BudgetPolicy policy) ? policy.unit() : null)
					.tag("budget", limit.name());
			}
			Counter.Builder builder = Counter.builder(this.meter)
				.description(switch (this.meter) {
					case DECISIONS -> "Decisions of limits by kind, name and outcome";
					case PLAN_DEFAULTED -> "Calls decided by the default plan: their plan was missing or unknown";
					case GIVE_BACKS -> "Give-backs of calls whose outcome did not count, given or failed";
					case MicrometerLimitListener.NEAR_LIMIT ->
						"Allowed decisions that left their key less than the near-limit share of its allowance";
					default -> "Calls decided by a failure mode while a store could not decide them";
				})
				.tag("kind", limit.kind().label())
				.tag("policy", limit.name());
			// Every counter with a tag has its value.
			return (this.tag != null && this.value != null) ? builder.tag(this.tag, this.value) : builder;
		}

	}

}
