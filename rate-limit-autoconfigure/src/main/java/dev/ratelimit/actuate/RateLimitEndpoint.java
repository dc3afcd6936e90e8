package dev.ratelimit.actuate;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.actuate.PolicyUsages.AnnotatedMethod;
import dev.ratelimit.actuate.PolicyUsages.Kind;
import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.BudgetLimit;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.BudgetWindow;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.concurrency.AdaptiveConcurrencyLimiter;
import dev.ratelimit.concurrency.AdaptiveLimit;
import dev.ratelimit.concurrency.DistributedConcurrencyLimiter;
import dev.ratelimit.concurrency.LocalConcurrencyLimiter;
import dev.ratelimit.concurrency.Priority;
import dev.ratelimit.core.Causes;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.Durations;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.LimitKind;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Refill;
import dev.ratelimit.core.NamedLimits;
import dev.ratelimit.core.Exemption;
import dev.ratelimit.core.Limit;
import dev.ratelimit.core.LimitDefinition;
import dev.ratelimit.core.LiveLimit;
import dev.ratelimit.core.PolicyValidationException;
import dev.ratelimit.core.Quota;
import dev.ratelimit.core.StoreParts;
import dev.ratelimit.live.LimitOverrides;
import dev.ratelimit.live.OverrideStoreException;
import dev.ratelimit.live.QuotaText;
import dev.ratelimit.plans.RecentCallers;

/**
 * The {@code ratelimits} endpoint: every active policy with its effective
 * configuration and where it applies ({@code GET /actuator/ratelimits}), one
 * key's current state ({@code GET /actuator/ratelimits/{policy}/{key}}) and a
 * reset of one key ({@code DELETE} on the same path), and the run-time
 * overrides of a configured limit's numbers: {@code GET}, {@code POST} (a JSON
 * body of {@code plan}, {@code capacity}, {@code refill}, {@code window},
 * {@code amount}, {@code permits}) and {@code DELETE} (with an optional
 * {@code ?plan=}) on {@code /actuator/ratelimits/{name}}. One selector rather
 * than a literal {@code /overrides} segment: Actuator paths are made of
 * selectors only, and {@code {name}/overrides} would be the key
 * {@code overrides} of the existing {@code {policy}/{key}} operations.
 * <p>
 * The endpoint is read-only by default: a reset hands a caller its full quota
 * back, an override raises a limit for everyone, so an endpoint exposed to the callers themselves would let anyone over
 * a limit reset it. The reset is available once
 * {@code management.endpoint.ratelimits.access=unrestricted}; a start-up
 * warning names the risk when it is then exposed over HTTP without Spring
 * Security.
 * <p>
 * The {@code key} selector is the caller's key as the policy's key expression
 * yields it (a user id, an IP address), not the storage key. Reading a key never
 * takes quota: a rate limit is asked for a decision of cost 0, a budget is
 * peeked. Policy names are looked up as rate limits first, then budgets, then
 * concurrency caps. A key is reported with the numbers that decide its calls
 * when it has a per-key override, else with the default plan's: its plan comes
 * from a request, which the endpoint does not have.
 */
@Endpoint(id = RateLimitEndpoint.ID, defaultAccess = Access.READ_ONLY)
public class RateLimitEndpoint {

	/** The endpoint's id. */
	public static final String ID = "ratelimits";

	/** The target of an override of the limit's own numbers rather than a plan's, in reports. */
	public static final String OWN = "(limit)";

	/** The key segment that lists a limit's heaviest keys rather than reading a caller's key. */
	public static final String TOP = "top";

	/** The access the endpoint has unless configured otherwise: reads only. */
	public static final Access DEFAULT_ACCESS = Access.READ_ONLY;

	private final NamedLimits<RateLimitPolicy> rateLimits;

	private final NamedLimits<BudgetPolicy> budgets;

	private final NamedLimits<ConcurrencyPolicy> concurrency;

	private final PolicyUsages usages;

	private final RateLimitBackend backend;

	private final LimitKeys keys;

	private final @Nullable CostBudgets costBudgets;

	private final LocalConcurrencyLimiter localConcurrency;

	private final @Nullable DistributedConcurrencyLimiter distributedConcurrency;

	private final @Nullable AdaptiveConcurrencyLimiter adaptiveConcurrency;

	private final LimitRegistry limits;

	private final LimitOverrides overrides;

	private @Nullable TopKeysReport topKeys;
	private final ChangeReports changes;

	/**
	 * Creates the endpoint.
	 * @param limits the configured policies, budgets and caps
	 * @param usages where each policy applies, and the inline policies
	 * @param backend the rate-limit backend
	 * @param keys builds storage keys
	 * @param costBudgets the budgets API; {@code null} when no budget is configured
	 * @param localConcurrency the limiter of local concurrency caps
	 * @param distributedConcurrency the limiter of distributed caps, or {@code null}
	 * without the Redis backend
	 * @param overrides the run-time overrides of the limits' numbers
	 * @param recentCallers each plan's recent callers on this instance, or {@code null} when not counted
	 */
	RateLimitEndpoint(LimitRegistry limits, PolicyUsages usages, RateLimitBackend backend, LimitKeys keys,
			@Nullable CostBudgets costBudgets, LocalConcurrencyLimiter localConcurrency,
			@Nullable DistributedConcurrencyLimiter distributedConcurrency,
			@Nullable AdaptiveConcurrencyLimiter adaptiveConcurrency, LimitOverrides overrides,
			@Nullable RecentCallers recentCallers) {
		this.limits = limits;
		this.overrides = overrides;
		this.changes = new ChangeReports(recentCallers);
		this.rateLimits = limits.rateLimits();
		this.budgets = limits.budgets();
		this.concurrency = limits.concurrency();
		this.usages = usages;
		this.backend = backend;
		this.keys = keys;
		this.costBudgets = costBudgets;
		this.localConcurrency = localConcurrency;
		this.distributedConcurrency = distributedConcurrency;
		this.adaptiveConcurrency = adaptiveConcurrency;
	}

	/**
	 * Lists each limit's heaviest keys under {@code /actuator/ratelimits/{policy}/top}.
	 * @param topKeys the report, or {@code null} when heavy hitters are off
	 */
	void setTopKeys(@Nullable TopKeysReport topKeys) {
		this.topKeys = topKeys;
	}

	/**
	 * Lists every policy: the configured ones and those defined inline in
	 * annotations, each with where it applies.
	 * @return the policies
	 */
	@ReadOperation
	public PoliciesDescriptor policies() {
		List<RateLimitDescriptor> rateLimits = new ArrayList<>();
		this.rateLimits.lives()
			.forEach((live) -> rateLimits.add(describe(live.current().limit(), false, definition(live))));
		this.usages.inlineRateLimits().forEach((policy) -> rateLimits.add(describe(policy, true, null)));
		List<BudgetDescriptor> budgets = new ArrayList<>();
		this.budgets.lives().forEach((live) -> budgets.add(describe(live.current().limit(), definition(live))));
		List<ConcurrencyDescriptor> caps = new ArrayList<>();
		this.concurrency.lives()
			.forEach((live) -> caps.add(describe(live.current().limit(), false, definition(live))));
		this.usages.inlineConcurrency().forEach((cap) -> caps.add(describe(cap, true, null)));
		return new PoliciesDescriptor(rateLimits, budgets, caps);
	}

	/**
	 * Reports one key's current state without changing it.
	 * @param policy the policy name
	 * @param key the caller's key
	 * @return the state, or {@code null} (404) when no policy has that name
	 */
	@ReadOperation
	public @Nullable KeyState key(@Selector String policy, @Selector String key) {
		if (TOP.equals(key)) {
			return top(policy);
		}
		return state(policy, key);
	}

	/**
	 * Lists a limit's heaviest keys: those refused most and those that consumed
	 * most over the last one to two windows, across the fleet with the Redis
	 * backend, each with its state now.
	 * @param policy the limit's name
	 * @return the list, or {@code null} (404) when no limit has that name
	 * @throws InvalidEndpointRequestException (400) when heavy hitters are off
	 */
	private @Nullable TopKeysState top(String policy) {
		LimitKind kind = kindOf(policy);
		if (kind == null) {
			return null;
		}
		if (this.topKeys == null) {
			String reason = "Heavy hitters are off (rate-limit.heavy-hitters.enabled=false): no top keys are kept";
			throw new InvalidEndpointRequestException(reason, reason);
		}
		return this.topKeys.report(kind, policy, this::state);
	}

	private @Nullable LimitKind kindOf(String name) {
		if (findRateLimit(name, "").isPresent()) {
			return LimitKind.RATE_LIMIT;
		}
		if (this.budgets.live(name).isPresent()) {
			return LimitKind.BUDGET;
		}
		return findConcurrency(name, "").isPresent() ? LimitKind.CONCURRENCY : null;
	}

	private @Nullable KeyState state(String policy, String key) {
		Optional<RateLimitPolicy> rateLimit = findRateLimit(policy, key);
		if (rateLimit.isPresent()) {
			String storageKey = this.keys.build(policy, key);
			Decision decision;
			try {
				// A peek takes nothing and starts tracking nothing: it only reports the quota as it stands.
				decision = this.backend.peek(rateLimit.get(), storageKey);
			}
			catch (RuntimeException ex) {
				return unavailable(policy, Kind.RATE_LIMIT, key, storageKey, this.backend.parts(), ex);
			}
			return new RateLimitKeyState(policy, Kind.RATE_LIMIT.label(), key, storageKey, decision.limit(),
					decision.remaining(), isoDuration(decision.resetAfterMicros()));
		}
		Optional<BudgetPolicy> budget = selected(this.budgets, policy, key);
		if (budget.isPresent()) {
			try {
				return budgetState(budget.get(), key);
			}
			catch (RuntimeException ex) {
				return unavailable(policy, Kind.BUDGET, key, budgetStorageKey(policy, key), this.backend.parts(), ex);
			}
		}
		Optional<ConcurrencyPolicy> cap = findConcurrency(policy, key);
		if (cap.isPresent()) {
			try {
				return concurrencyState(cap.get(), key);
			}
			catch (RuntimeException ex) {
				return unavailable(policy, Kind.CONCURRENCY, key, key, this.backend.parts(), ex);
			}
		}
		return null;
	}

	/**
	 * The state of a key whose store could not be read (a Redis Cluster node
	 * down, a slot moving): what failed and where, never an error of the
	 * endpoint's own.
	 */
	private static UnavailableKeyState unavailable(String policy, Kind kind, String key, String storageKey,
			StoreParts parts, RuntimeException failure) {
		String part = parts.partOf(storageKey);
		return new UnavailableKeyState(policy, kind.label(), key, storageKey, part.isEmpty() ? null : part,
				"The store could not be read" + (part.isEmpty() ? "" : " on " + part) + ": "
						+ Causes.describe(failure));
	}

	/**
	 * Resets one key of a rate limit or a budget: its state is deleted, so its
	 * next call finds the full quota. Concurrency caps cannot be reset, since
	 * their permits belong to calls in flight. A key that had its full quota
	 * already is reset all the same (nothing changes) with a warning: the key
	 * may be mistyped, or be a storage key rather than the caller's value.
	 * @param policy the policy name
	 * @param key the caller's key
	 * @return what was reset, with the warnings
	 * @throws InvalidEndpointRequestException (400) for an unknown policy, a
	 * concurrency cap, or a backend that cannot reset keys
	 */
	@DeleteOperation
	public ResetDescriptor reset(@Selector String policy, @Selector String key) {
		try {
			Optional<RateLimitPolicy> rateLimit = findRateLimit(policy, key);
			if (rateLimit.isPresent()) {
				String storageKey = this.keys.build(policy, key);
				List<String> warnings = untouched(hadFullQuota(policy, rateLimit.get(), storageKey), policy, key,
						rateLimit.get().key(), storageKey);
				this.backend.reset(rateLimit.get(), storageKey);
				return new ResetDescriptor(policy, Kind.RATE_LIMIT.label(), key, storageKey, warnings);
			}
			Optional<BudgetPolicy> budget = selected(this.budgets, policy, key);
			if (budget.isPresent()) {
				String storageKey = budgetStorageKey(policy, key);
				List<String> warnings = untouched(unspent(budget.get(), key), policy, key, budget.get().key(),
						storageKey);
				costBudgets().reset(budget.get(), key);
				return new ResetDescriptor(policy, Kind.BUDGET.label(), key, storageKey, warnings);
			}
		}
		catch (UnsupportedOperationException ex) {
			String message = String.valueOf(ex.getMessage());
			throw new InvalidEndpointRequestException(message, message, ex);
		}
		if (findConcurrency(policy, key).isPresent()) {
			String reason = "Concurrency cap '" + policy + "' cannot be reset: its permits are released "
					+ "by the calls holding them or expire after their permit-ttl";
			throw new InvalidEndpointRequestException(reason, reason);
		}
		// A DELETE answering null would be 204 No Content, which reads as success.
		String reason = "No rate limit, budget or concurrency cap named '" + policy + "'";
		throw new InvalidEndpointRequestException(reason, reason);
	}

	/**
	 * Whether a key has its full quota under every variant of the limit: a plan's
	 * larger capacity would show a key the default plan's numbers cap at full.
	 */
	private boolean hadFullQuota(String name, RateLimitPolicy selected, String storageKey) {
		List<RateLimitPolicy> variants = this.rateLimits.live(name)
			.map((live) -> live.current().variants())
			.orElse(List.of(selected));
		for (RateLimitPolicy variant : variants) {
			Decision decision = this.backend.peek(variant, storageKey);
			if (decision.remaining() < decision.limit()) {
				return false;
			}
		}
		return true;
	}

	private boolean unspent(BudgetPolicy budget, String key) {
		BudgetDecision decision = costBudgets().remaining(budget, key);
		for (long spent : decision.spentMicros()) {
			if (spent != 0) {
				return false;
			}
		}
		return decision.reservedMicros() == 0;
	}

	private static List<String> untouched(boolean full, String policy, String key, String keyExpression,
			String storageKey) {
		if (!full) {
			return List.of();
		}
		return List.of("Key '" + key + "' of '" + policy + "' had its full quota: the reset changed nothing. "
				+ "The key is the caller's value as the key expression " + keyExpression + " yields it (stored as "
				+ storageKey + "); check it against GET /actuator/ratelimits/" + policy + "/{key}");
	}

	private Optional<RateLimitPolicy> findRateLimit(String name, String key) {
		return selected(this.rateLimits, name, key).or(() -> this.usages.inlineRateLimit(name));
	}

	private Optional<ConcurrencyPolicy> findConcurrency(String name, String key) {
		return selected(this.concurrency, name, key).or(() -> this.usages.inlineConcurrency(name));
	}

	/** The budgets API: a budget is found only when budgets are configured, and then there is one. */
	private CostBudgets costBudgets() {
		return Objects.requireNonNull(this.costBudgets, "budgets are configured");
	}

	/**
	 * The variant that decides a key's calls: its per-key override, else the
	 * default plan. A caller's plan comes from its request, which a key alone
	 * does not tell, so callers of other plans are shown with the default plan's numbers.
	 */
	private static <L extends Limit> Optional<L> selected(NamedLimits<L> limits, String name, String key) {
		return limits.live(name).map((live) -> live.current().select(null, key));
	}

	private BudgetKeyState budgetState(BudgetPolicy budget, String key) {
		BudgetDecision decision = costBudgets().remaining(budget, key);
		List<BudgetWindowState> windows = new ArrayList<>();
		for (int i = 0; i < budget.limits().size(); i++) {
			BudgetLimit limit = budget.limits().get(i);
			// Live reservations hold their estimate against every window at once.
			windows.add(new BudgetWindowState(window(limit.window()), decimal(limit.amountMicros()),
					decimal(decision.spentMicros()[i]), decimal(decision.reservedMicros()),
					decimal(decision.remainingMicros()[i]), isoDuration(decision.resetAfterMicros()[i])));
		}
		return new BudgetKeyState(budget.name(), Kind.BUDGET.label(), key, budgetStorageKey(budget.name(), key),
				budget.unit(), windows);
	}

	private String budgetStorageKey(String budget, String key) {
		// As CostBudgets builds it: budgets live in a namespace of their own.
		return this.keys.build("budget:" + budget, key);
	}

	private ConcurrencyKeyState concurrencyState(ConcurrencyPolicy cap, String key) {
		if (cap.isAdaptive()) {
			// The key of an adaptive cap names a class: its calls in flight against the limit now.
			int limit = (this.adaptiveConcurrency != null) ? this.adaptiveConcurrency.limit(cap.name()).orElse(0) : 0;
			Priority priority = cap.shedding().priorityOf(key);
			int inUse = (this.adaptiveConcurrency != null) ? this.adaptiveConcurrency.inFlight(cap.name(), priority)
					: 0;
			return new ConcurrencyKeyState(cap.name(), Kind.CONCURRENCY.label(), priority.label(), label(cap.scope()),
					limit, inUse, Math.max(0, limit - inUse));
		}
		DistributedConcurrencyLimiter distributed = (cap.scope() == ConcurrencyPolicy.Scope.DISTRIBUTED)
				? this.distributedConcurrency : null;
		int inUse = (distributed != null) ? distributed.inUse(cap, key) : this.localConcurrency.inUse(cap, key);
		return new ConcurrencyKeyState(cap.name(), Kind.CONCURRENCY.label(), key, label(cap.scope()), cap.permits(),
				inUse, Math.max(0, cap.permits() - inUse));
	}

	/**
	 * Reports a configured limit's run-time overrides with the numbers they
	 * change: the configured numbers, each plan's, and the numbers in force.
	 * @param name the limit's name
	 * @return the overrides, or {@code null} (404) when no configured limit has that name
	 */
	@ReadOperation
	public @Nullable OverridesDescriptor overrides(@Selector String name) {
		return this.limits.live(name).map((live) -> overridesOf(live, null, List.of())).orElse(null);
	}

	/**
	 * Overrides a configured limit's numbers at run time, or one plan's: on
	 * every instance sharing the Redis backend, on this one with the memory
	 * backend. Numbers not given keep their value. Write access is required.
	 * <p>
	 * An override that would change no caller's limit is refused: one of the
	 * limit's own numbers when every caller is decided by a plan that sets that
	 * number itself, numbers equal to those in force, or a plan none of the
	 * limit's recent callers on this instance was on while others had callers.
	 * With {@code force} it is applied, and the answer carries the reason as a warning.
	 * @param name the limit's name
	 * @param plan the plan to override, or {@code null} for the limit itself
	 * @param capacity a rate limit's capacity
	 * @param refill a rate limit's refill, such as {@code 10/1s}
	 * @param window a window algorithm's window, such as {@code 1m}
	 * @param amount a budget's amount, in units
	 * @param permits a concurrency cap's permits
	 * @param force whether to apply an override that would change no caller
	 * @return the limit's overrides now, whom the override reaches and warnings
	 * @throws InvalidEndpointRequestException (400) for an unknown limit or plan,
	 * a number the limit's kind does not have, or a value it refuses
	 * @throws ChangeRefusedException (409 over HTTP) for an override that would change no caller
	 * @throws OverrideStoreException when the store did not take the override
	 * (503 over HTTP, see {@link RateLimitEndpointWebExtension}); nothing changes then
	 */
	@WriteOperation
	public OverridesDescriptor override(@Selector String name, @Nullable String plan, @Nullable String capacity,
			@Nullable String refill, @Nullable String window, @Nullable String amount, @Nullable String permits,
			@Nullable Boolean force) {
		LiveLimit<? extends Limit> live = configured(name);
		List<String> warnings = new ArrayList<>();
		AffectsDescriptor affects;
		try {
			Quota quota = QuotaText.of(capacity, refill, window, amount, permits);
			Map<String, Quota> next = new LinkedHashMap<>(live.overrides());
			next.put(target(plan), quota);
			affects = this.changes.override(target(plan), quota, live.current(),
					live.configured().overriddenBy(next), Boolean.TRUE.equals(force), warnings);
			this.overrides.set(name, target(plan), quota);
		}
		catch (PolicyValidationException ex) {
			String reason = "Invalid override of " + live.current().limit().kind().label() + " '" + name + "': "
					+ ex.getMessage();
			throw new InvalidEndpointRequestException(reason, reason, ex);
		}
		return overridesOf(live, affects, warnings);
	}

	/**
	 * Removes a run-time override of a limit, or of one of its plans: the
	 * configured numbers apply again. Write access is required.
	 * @param name the limit's name
	 * @param plan the plan whose override to remove, or {@code null} for the limit's own
	 * @return the limit's overrides now, whom the removal reaches and warnings
	 * @throws InvalidEndpointRequestException (400) for an unknown limit, or no such override
	 * @throws OverrideStoreException when the store did not take the removal
	 * (503 over HTTP, see {@link RateLimitEndpointWebExtension}); nothing changes then
	 */
	@DeleteOperation
	public OverridesDescriptor removeOverride(@Selector String name, @Nullable String plan) {
		LiveLimit<? extends Limit> live = configured(name);
		LimitDefinition<? extends Limit> before = live.current();
		if (this.overrides.remove(name, target(plan)) == null) {
			String reason = "No override of " + live.current().limit().kind().label() + " '" + name + "'"
					+ ((plan != null) ? " plan '" + plan + "'" : "") + " to remove; active: "
					+ texts(live.overrides()).keySet();
			throw new InvalidEndpointRequestException(reason, reason);
		}
		List<String> warnings = new ArrayList<>();
		AffectsDescriptor affects = this.changes.removal(target(plan), before, live.current(), warnings);
		return overridesOf(live, affects, warnings);
	}

	private LiveLimit<? extends Limit> configured(String name) {
		Optional<LiveLimit<? extends Limit>> live = this.limits.live(name);
		if (live.isPresent()) {
			return live.get();
		}
		boolean inline = this.usages.inlineRateLimit(name).isPresent()
				|| this.usages.inlineConcurrency(name).isPresent();
		String reason = inline ? "'" + name + "' is defined inline in an annotation; only limits configured under "
				+ "rate-limit.* can be overridden" : "No configured rate limit, budget or concurrency cap named '"
						+ name + "'";
		throw new InvalidEndpointRequestException(reason, reason);
	}

	private static String target(@Nullable String plan) {
		return (plan != null) ? plan.strip() : "";
	}

	private OverridesDescriptor overridesOf(LiveLimit<? extends Limit> live, @Nullable AffectsDescriptor affects,
			List<String> warnings) {
		LimitDefinition<? extends Limit> configured = live.configured();
		LimitDefinition<? extends Limit> current = live.current();
		Map<String, Map<String, Object>> plans = new LinkedHashMap<>();
		for (String plan : current.planQuotas().keySet()) {
			plans.put(plan, LimitOverrides.numbers(current.select(plan, null)));
		}
		return new OverridesDescriptor(live.name(), current.limit().kind().label(), this.overrides.isShared(),
				texts(live.overrides()), LimitOverrides.numbers(configured.limit()),
				LimitOverrides.numbers(current.limit()), plans, this.changes.recent(current), affects, warnings);
	}

	private @Nullable DefinitionDescriptor definition(LiveLimit<? extends Limit> live) {
		LimitDefinition<? extends Limit> definition = live.current();
		Map<String, Quota> overrides = live.overrides();
		Exemption exemption = definition.exemption();
		if (definition.isPlain() && overrides.isEmpty()) {
			return null;
		}
		ExemptDescriptor exempt = exemption.isNone() ? null
				: new ExemptDescriptor(exemption.cidrs().stream().map(String::valueOf).toList(),
						exemption.roles().stream().sorted().toList(), exemption.when());
		return new DefinitionDescriptor(definition.planExpression(), definition.defaultPlan(),
				texts(definition.planQuotas()), texts(definition.keyQuotas()), exempt, texts(overrides));
	}

	private static Map<String, Map<String, Object>> texts(Map<String, Quota> quotas) {
		Map<String, Map<String, Object>> texts = new LinkedHashMap<>();
		quotas.forEach((target, quota) -> texts.put(target.isEmpty() ? OWN : target, quota.numbers()));
		return texts;
	}

	private RateLimitDescriptor describe(RateLimitPolicy policy, boolean inline,
			@Nullable DefinitionDescriptor definition) {
		boolean rateBased = policy.algorithm().isRateBased();
		return new RateLimitDescriptor(policy.name(), inline, label(policy.algorithm()), policy.capacity(),
				rateBased ? refill(Objects.requireNonNull(policy.refill(), "a rate-based policy has one")) : null,
				rateBased ? null : duration(policy.windowMicros()),
				policy.key(), label(policy.failureMode()), label(policy.missingKey()), policy.shadow(),
				duration(policy.maxWaitMicros()), policy.localInstances(), policy.prefetch(), label(policy.visibility()),
				routes(policy.name()), methods(Kind.RATE_LIMIT, policy.name()), definition);
	}

	private BudgetDescriptor describe(BudgetPolicy budget, @Nullable DefinitionDescriptor definition) {
		List<BudgetLimitDescriptor> limits = new ArrayList<>();
		for (BudgetLimit limit : budget.limits()) {
			limits.add(new BudgetLimitDescriptor(window(limit.window()), decimal(limit.amountMicros())));
		}
		return new BudgetDescriptor(budget.name(), budget.unit(), limits, budget.zone().getId(), budget.key(),
				label(budget.failureMode()), duration(budget.reservationTimeoutMicros()), label(budget.onError()),
				label(budget.visibility()), methods(Kind.BUDGET, budget.name()), definition);
	}

	private ConcurrencyDescriptor describe(ConcurrencyPolicy cap, boolean inline,
			@Nullable DefinitionDescriptor definition) {
		return new ConcurrencyDescriptor(cap.name(), inline, cap.permits(), label(cap.scope()), cap.key(),
				duration(cap.maxWaitMicros()), duration(cap.permitTtlMicros()), label(cap.rejection()),
				label(cap.failureMode()), label(cap.visibility()), methods(Kind.CONCURRENCY, cap.name()),
				routes(cap.name()), adaptive(cap), definition);
	}

	/** An adaptive cap's settings and, once it has decided a call, its limit and calls in flight now. */
	private @Nullable AdaptiveDescriptor adaptive(ConcurrencyPolicy cap) {
		AdaptiveLimit adaptive = cap.adaptive();
		if (adaptive == null) {
			return null;
		}
		Map<String, Integer> shares = new LinkedHashMap<>();
		Map<String, Integer> inFlight = new LinkedHashMap<>();
		for (Priority priority : Priority.values()) {
			shares.put(priority.label(), cap.shedding().shares().getOrDefault(priority, 0));
			inFlight.put(priority.label(),
					(this.adaptiveConcurrency != null) ? this.adaptiveConcurrency.inFlight(cap.name(), priority) : 0);
		}
		OptionalInt now = (this.adaptiveConcurrency != null) ? this.adaptiveConcurrency.limit(cap.name())
				: OptionalInt.empty();
		return new AdaptiveDescriptor(adaptive.algorithm().name().toLowerCase(Locale.ROOT),
				now.isPresent() ? now.getAsInt() : null, adaptive.initialLimit(), adaptive.minLimit(),
				adaptive.maxLimit(), duration(adaptive.timeoutMicros()), cap.key(), shares,
				cap.shedding().defaultPriority().label(), inFlight, cap.shadow());
	}

	private List<RouteDescriptor> routes(String policy) {
		return this.usages.routesOf(policy)
			.stream()
			.map((route) -> new RouteDescriptor(route.pattern(), route.methods()))
			.toList();
	}

	private List<MethodDescriptor> methods(Kind kind, String policy) {
		List<MethodDescriptor> methods = new ArrayList<>();
		for (AnnotatedMethod method : this.usages.methodsOf(kind, policy)) {
			methods.add(new MethodDescriptor(method.method(), method.key()));
		}
		return methods;
	}

	/**
	 * Writes a rate as its users write it: per second, minute, hour or day when
	 * that is a whole number of tokens ({@code 10/1s}, not the reduced
	 * {@code 1/100ms}), else in lowest terms.
	 */
	static String refill(Refill refill) {
		return refill.toString();
	}

	/** A configured duration, in the syntax of the properties: {@code 2s}, {@code 500ms}. */
	static String duration(long micros) {
		return (micros == 0) ? "0s" : Durations.format(micros);
	}

	/** A measured time, which rarely falls on a unit: ISO-8601, such as {@code PT29M59.9S}. */
	static String isoDuration(long micros) {
		return Duration.ofNanos(micros * 1_000L).toString();
	}

	/** An amount in units, exact and without trailing zeros: {@code 5}, {@code 0.25}. */
	static BigDecimal decimal(long micros) {
		BigDecimal value = BigDecimal.valueOf(micros, 6).stripTrailingZeros();
		// stripTrailingZeros turns 50 into 5E+1, which JSON writers print as such.
		return (value.scale() < 0) ? value.setScale(0) : value;
	}

	private static String window(BudgetWindow window) {
		return (window.kind() == BudgetWindow.Kind.ROLLING) ? duration(window.rollingMicros())
				: label(window.kind());
	}

	private static String label(Enum<?> value) {
		return value.name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

	/**
	 * Every policy of the application.
	 *
	 * @param rateLimits the rate-limit policies, configured then inline
	 * @param budgets the budgets
	 * @param concurrency the concurrency caps, configured then inline
	 */
	public record PoliciesDescriptor(List<RateLimitDescriptor> rateLimits, List<BudgetDescriptor> budgets,
			List<ConcurrencyDescriptor> concurrency) {
	}

	/**
	 * A rate-limit policy and where it applies.
	 *
	 * @param name the name
	 * @param inline whether an annotation defines it
	 * @param algorithm the algorithm, such as {@code token-bucket}
	 * @param capacity the burst or the limit per window
	 * @param refill the rate of the bucket algorithms, such as {@code 10/1s}; {@code null} for windows
	 * @param window the window of the window algorithms; {@code null} for buckets
	 * @param key the key expression
	 * @param failureMode {@code open}, {@code closed} or {@code local}
	 * @param missingKey {@code shared}, {@code allow} or {@code reject}
	 * @param shadow whether it only reports
	 * @param maxWait how long a caller over the limit may wait for its turn
	 * @param localInstances the instances sharing it during a local fallback
	 * @param prefetch tokens an instance takes from Redis in one call, 0 when off
	 * @param visibility whether callers are told of it: {@code auto}, {@code public} or {@code internal}
	 * @param routes the route rules applying it
	 * @param methods the annotated methods applying it
	 * @param definition its plans, key overrides, exemption and run-time overrides; {@code null} without any
	 */
	public record RateLimitDescriptor(String name, boolean inline, String algorithm, long capacity,
			@Nullable String refill, @Nullable String window, String key, String failureMode, String missingKey,
			boolean shadow, String maxWait, int localInstances, long prefetch, String visibility,
			List<RouteDescriptor> routes, List<MethodDescriptor> methods, @Nullable DefinitionDescriptor definition) {
	}

	/**
	 * A budget and where it applies.
	 *
	 * @param name the name
	 * @param unit the unit amounts are counted in
	 * @param limits the amounts per window
	 * @param zone the time zone of calendar windows
	 * @param key the key expression
	 * @param failureMode {@code open}, {@code closed} or {@code local}
	 * @param reservationTimeout how long an unsettled reservation lives
	 * @param onError what a failed call is charged: {@code keep} or {@code release}
	 * @param visibility whether callers are told of it: {@code auto}, {@code public} or {@code internal}
	 * @param methods the annotated methods charging it
	 * @param definition its plans, key overrides, exemption and run-time overrides; {@code null} without any
	 */
	public record BudgetDescriptor(String name, String unit, List<BudgetLimitDescriptor> limits, String zone,
			String key, String failureMode, String reservationTimeout, String onError, String visibility,
			List<MethodDescriptor> methods, @Nullable DefinitionDescriptor definition) {
	}

	/**
	 * One amount of a budget.
	 *
	 * @param window {@code day}, {@code week}, {@code month} or a rolling duration such as {@code 24h}
	 * @param amount the amount per window, in units
	 */
	public record BudgetLimitDescriptor(String window, BigDecimal amount) {
	}

	/**
	 * A concurrency cap and where it applies.
	 *
	 * @param name the name
	 * @param inline whether an annotation defines it
	 * @param permits the most calls in flight per key
	 * @param scope {@code local} or {@code distributed}
	 * @param key the key expression
	 * @param maxWait how long a caller waits for a permit
	 * @param permitTtl how long a distributed permit lives without renewal
	 * @param rejection {@code too-many-requests} or {@code service-unavailable}
	 * @param failureMode what a distributed cap does when Redis cannot answer
	 * @param visibility whether callers are told of it: {@code auto}, {@code public} or {@code internal}
	 * @param methods the annotated methods it caps
	 * @param definition its plans, key overrides, exemption and run-time overrides; {@code null} without any
	 */
	public record ConcurrencyDescriptor(String name, boolean inline, int permits, String scope, String key,
			String maxWait, String permitTtl, String rejection, String failureMode, String visibility,
			List<MethodDescriptor> methods, List<RouteDescriptor> routes, @Nullable AdaptiveDescriptor adaptive,
			@Nullable DefinitionDescriptor definition) {
	}

	/**
	 * An adaptive cap: how it finds its limit, the limit now and whom it sheds.
	 *
	 * @param algorithm {@code gradient2}, {@code vegas} or {@code aimd}
	 * @param limit the calls it allows in flight now; {@code null} before its first call in this instance
	 * @param initialLimit the limit before any call was measured
	 * @param minLimit the lowest the limit goes
	 * @param maxLimit the highest the limit goes
	 * @param timeout a call running longer counts as a drop ({@code 0s}: no such bound)
	 * @param priority the expression naming each call's class
	 * @param shares each class's guaranteed share, in percent
	 * @param defaultPriority the class of a call whose priority names none
	 * @param inFlight each class's calls in flight now
	 * @param shadow whether it only reports what it would shed
	 */
	public record AdaptiveDescriptor(String algorithm, @Nullable Integer limit, int initialLimit, int minLimit,
			int maxLimit, String timeout, String priority, Map<String, Integer> shares, String defaultPriority,
			Map<String, Integer> inFlight, boolean shadow) {
	}

	/**
	 * What a configured limit adds to its own numbers. Quotas are by target:
	 * a plan's name, or {@value #OWN} for the limit's own numbers.
	 *
	 * @param plan the expression naming a caller's plan, or {@code null}
	 * @param defaultPlan the plan of callers without a known one, or {@code null}
	 * @param plans each plan's configured numbers
	 * @param keyOverrides the configured numbers of listed key values
	 * @param exempt when the limit does not apply, or {@code null}
	 * @param overrides the run-time overrides in force
	 */
	public record DefinitionDescriptor(@Nullable String plan, @Nullable String defaultPlan,
			Map<String, Map<String, Object>> plans, Map<String, Map<String, Object>> keyOverrides,
			@Nullable ExemptDescriptor exempt, Map<String, Map<String, Object>> overrides) {
	}

	/**
	 * When a limit does not apply.
	 *
	 * @param cidrs the client address ranges exempt
	 * @param roles the roles exempt
	 * @param when the expression exempting a call, or {@code null}
	 */
	public record ExemptDescriptor(List<String> cidrs, List<String> roles, @Nullable String when) {
	}

	/**
	 * A configured limit's run-time overrides.
	 *
	 * @param name the limit's name
	 * @param type {@code rate-limit}, {@code budget} or {@code concurrency}
	 * @param shared whether the overrides apply on every instance (Redis) or on this one (memory)
	 * @param overrides the overrides in force by target: a plan, or {@value #OWN} for the limit's own numbers
	 * @param configured the limit's numbers from the configuration
	 * @param effective the limit's own numbers in force: those of every caller when it has no plans, of
	 * no caller when it has (callers without a plan are decided by the default plan's)
	 * @param plans each plan's numbers in force
	 * @param recentCallers each plan's recent callers on this instance; {@code null} when not counted
	 * @param affects whom the change just made reaches; {@code null} in a read
	 * @param warnings what the operator should know about the change just made
	 */
	public record OverridesDescriptor(String name, String type, boolean shared,
			Map<String, Map<String, Object>> overrides, Map<String, Object> configured, Map<String, Object> effective,
			Map<String, Map<String, Object>> plans, @Nullable RecentCallersDescriptor recentCallers,
			@Nullable AffectsDescriptor affects, List<String> warnings) {
	}

	/**
	 * How many distinct callers a limit's plans had recently (an estimate, exact
	 * for a few callers, within about 6 % beyond), across every instance sharing
	 * the Redis backend (a caller seen by two counts once), else on this
	 * instance.
	 *
	 * @param window a caller counts when seen within at least this long, at most twice as long (ISO-8601)
	 * @param counted whose calls were counted: this instance, or every instance sharing the backend
	 * @param byPlan the callers by the plan that decided their calls: every plan, or
	 * {@value #OWN} for a limit without plans; {@code (listed keys)} for the listed keys of a limit with plans
	 */
	public record RecentCallersDescriptor(String window, String counted, Map<String, Long> byPlan) {
	}

	/**
	 * Whom a change reaches: the callers whose numbers it changes.
	 *
	 * @param plans the plans whose callers' numbers change, or {@value #OWN} for every caller of a limit
	 * without plans; empty when it changes none
	 * @param keys the listed keys ({@code overrides.<key>}) whose numbers change
	 * @param recentCallers the recent callers of those plans and keys (counted as
	 * {@code recentCallers.counted} says); {@code null} when not counted
	 */
	public record AffectsDescriptor(List<String> plans, List<String> keys, @Nullable Long recentCallers) {
	}

	/**
	 * A route rule applying a policy.
	 *
	 * @param pattern the path pattern, or {@code null} when the rule has none
	 * @param methods the HTTP methods; empty for every method
	 */
	public record RouteDescriptor(@Nullable String pattern, List<String> methods) {
	}

	/**
	 * An annotated method applying a policy.
	 *
	 * @param method {@code fully.qualified.Class#method}
	 * @param key the key expression in force there
	 */
	public record MethodDescriptor(String method, @Nullable String key) {
	}

	/**
	 * The state of one key of one policy.
	 */
	public sealed interface KeyState
			permits RateLimitKeyState, BudgetKeyState, ConcurrencyKeyState, TopKeysState, UnavailableKeyState {
	}

	/**
	 * One key whose state could not be read now: its store failed the read (a
	 * Redis Cluster node down, a slot moving). Answered with 503 over HTTP, and
	 * listed so among a limit's top keys.
	 *
	 * @param policy the policy name
	 * @param type {@code rate-limit}, {@code budget} or {@code concurrency}
	 * @param key the caller's key
	 * @param storageKey the key the store keeps it under
	 * @param part the part of the store that keeps it (a Cluster master), or
	 * {@code null} for a store of one part
	 * @param unavailable why the state could not be read
	 */
	public record UnavailableKeyState(String policy, String type, String key, String storageKey,
			@Nullable String part, String unavailable) implements KeyState {
	}

	/**
	 * A limit's heaviest keys: what {@code {policy}/top} answers.
	 *
	 * @param policy the limit's name
	 * @param type {@code rate-limit}, {@code budget} or {@code concurrency}
	 * @param window how long a window lasts, ISO-8601
	 * @param covers the longest past the counts cover (two windows), ISO-8601
	 * @param counted whose counts are summed: this instance, or every instance sharing the backend
	 * @param instances how many instances' counts are summed
	 * @param keysHashed whether keys are listed as {@code sha256:} hashes
	 * @param units what {@code units} counts
	 * @param byRefusals the keys refused most, most first
	 * @param byUnits the keys that consumed most, most first
	 */
	public record TopKeysState(String policy, String type, String window, String covers, String counted,
			int instances, boolean keysHashed, String units, List<TopKey> byRefusals, List<TopKey> byUnits)
			implements KeyState {
	}

	/**
	 * One of a limit's heaviest keys. A count is never below the truth and
	 * exceeds it by at most its overestimate; 0 when the key is not among the
	 * heaviest of that ranking.
	 *
	 * @param key the caller's key as the key expression produced it, or its hash
	 * @param refusals calls refused
	 * @param refusalsOverestimate how much of {@code refusals} may be overcounted
	 * @param units units consumed by allowed calls
	 * @param unitsOverestimate how much of {@code units} may be overcounted
	 * @param state the key's state now, or {@code null} when it cannot be read by key
	 * (the shared bucket of keyless callers, a key too long to keep readable) or
	 * keys are listed hashed (the state names the key)
	 */
	public record TopKey(String key, long refusals, long refusalsOverestimate, BigDecimal units,
			BigDecimal unitsOverestimate, @Nullable KeyState state) {
	}

	/**
	 * One key of a rate-limit policy.
	 *
	 * @param policy the policy name
	 * @param type {@code rate-limit}
	 * @param key the caller's key
	 * @param storageKey the key the backend stores it under
	 * @param limit the policy's quota
	 * @param remaining whole units left now
	 * @param resetAfter time until the quota is full again, ISO-8601
	 */
	public record RateLimitKeyState(String policy, String type, String key, String storageKey, long limit,
			long remaining, String resetAfter) implements KeyState {
	}

	/**
	 * One key of a budget.
	 *
	 * @param policy the budget name
	 * @param type {@code budget}
	 * @param key the caller's key
	 * @param storageKey the key the store keeps it under
	 * @param unit the unit of the amounts
	 * @param windows the state per amount of the budget, in its order
	 */
	public record BudgetKeyState(String policy, String type, String key, String storageKey, String unit,
			List<BudgetWindowState> windows) implements KeyState {
	}

	/**
	 * One window of a budget key, in units.
	 *
	 * @param window the window, as in {@link BudgetLimitDescriptor}
	 * @param amount the budget's amount for the window
	 * @param spent what settled calls spent in the current window
	 * @param reserved what calls in flight hold
	 * @param remaining what can still be reserved
	 * @param resetAfter time until the window ends, ISO-8601
	 */
	public record BudgetWindowState(String window, BigDecimal amount, BigDecimal spent, BigDecimal reserved,
			BigDecimal remaining, String resetAfter) {
	}

	/**
	 * One key of a concurrency cap.
	 *
	 * @param policy the cap's name
	 * @param type {@code concurrency}
	 * @param key the caller's key
	 * @param scope {@code local} (this instance's count) or {@code distributed}
	 * @param permits the most calls in flight
	 * @param inUse the calls in flight now
	 * @param available the permits free now
	 */
	public record ConcurrencyKeyState(String policy, String type, String key, String scope, int permits, int inUse,
			int available) implements KeyState {
	}

	/**
	 * What a reset deleted.
	 *
	 * @param policy the policy name
	 * @param type {@code rate-limit} or {@code budget}
	 * @param key the caller's key
	 * @param storageKey the storage key deleted
	 * @param warnings what the operator should know: a key that had its full quota, so that nothing changed
	 */
	public record ResetDescriptor(String policy, String type, String key, String storageKey, List<String> warnings) {
	}

}
