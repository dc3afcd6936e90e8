package dev.ratelimit.actuate;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

import dev.ratelimit.LimitRegistry;
import dev.ratelimit.actuate.PolicyUsages.AnnotatedMethod;
import dev.ratelimit.actuate.PolicyUsages.Kind;
import dev.ratelimit.budget.BudgetDecision;
import dev.ratelimit.budget.BudgetLimit;
import dev.ratelimit.budget.BudgetPolicy;
import dev.ratelimit.budget.BudgetWindow;
import dev.ratelimit.budget.CostBudgets;
import dev.ratelimit.concurrency.ConcurrencyPolicy;
import dev.ratelimit.concurrency.DistributedConcurrencyLimiter;
import dev.ratelimit.concurrency.LocalConcurrencyLimiter;
import dev.ratelimit.core.Decision;
import dev.ratelimit.core.Durations;
import dev.ratelimit.core.LimitKeys;
import dev.ratelimit.core.RateLimitBackend;
import dev.ratelimit.core.RateLimitPolicy;
import dev.ratelimit.core.Refill;
import dev.ratelimit.core.NamedLimits;

/**
 * The {@code ratelimits} endpoint: every active policy with its effective
 * configuration and where it applies ({@code GET /actuator/ratelimits}), one
 * key's current state ({@code GET /actuator/ratelimits/{policy}/{key}}) and a
 * reset of one key ({@code DELETE} on the same path).
 * <p>
 * The endpoint is read-only by default: a reset hands a caller its full quota
 * back, so an endpoint exposed to the callers themselves would let anyone over
 * a limit reset it. The reset is available once
 * {@code management.endpoint.ratelimits.access=unrestricted}; a start-up
 * warning names the risk when it is then exposed over HTTP without Spring
 * Security.
 * <p>
 * The {@code key} selector is the caller's key as the policy's key expression
 * yields it (a user id, an IP address), not the storage key. Reading a key never
 * takes quota: a rate limit is asked for a decision of cost 0, a budget is
 * peeked. Policy names are looked up as rate limits first, then budgets, then
 * concurrency caps.
 */
@Endpoint(id = RateLimitEndpoint.ID, defaultAccess = Access.READ_ONLY)
public class RateLimitEndpoint {

	/** The endpoint's id. */
	public static final String ID = "ratelimits";

	/** The access the endpoint has unless configured otherwise: reads only. */
	public static final Access DEFAULT_ACCESS = Access.READ_ONLY;

	private final NamedLimits<RateLimitPolicy> rateLimits;

	private final NamedLimits<BudgetPolicy> budgets;

	private final NamedLimits<ConcurrencyPolicy> concurrency;

	private final PolicyUsages usages;

	private final RateLimitBackend backend;

	private final LimitKeys keys;

	private final CostBudgets costBudgets;

	private final LocalConcurrencyLimiter localConcurrency;

	private final @Nullable DistributedConcurrencyLimiter distributedConcurrency;

	/**
	 * Creates the endpoint.
	 * @param limits the configured policies, budgets and caps
	 * @param usages where each policy applies, and the inline policies
	 * @param backend the rate-limit backend
	 * @param keys builds storage keys
	 * @param costBudgets the budgets API
	 * @param localConcurrency the limiter of local concurrency caps
	 * @param distributedConcurrency the limiter of distributed caps, or {@code null}
	 * without the Redis backend
	 */
	RateLimitEndpoint(LimitRegistry limits, PolicyUsages usages, RateLimitBackend backend, LimitKeys keys,
			CostBudgets costBudgets, LocalConcurrencyLimiter localConcurrency,
			@Nullable DistributedConcurrencyLimiter distributedConcurrency) {
		this.rateLimits = limits.rateLimits();
		this.budgets = limits.budgets();
		this.concurrency = limits.concurrency();
		this.usages = usages;
		this.backend = backend;
		this.keys = keys;
		this.costBudgets = costBudgets;
		this.localConcurrency = localConcurrency;
		this.distributedConcurrency = distributedConcurrency;
	}

	/**
	 * Lists every policy: the configured ones and those defined inline in
	 * annotations, each with where it applies.
	 * @return the policies
	 */
	@ReadOperation
	public PoliciesDescriptor policies() {
		List<RateLimitDescriptor> rateLimits = new ArrayList<>();
		this.rateLimits.all().forEach((policy) -> rateLimits.add(describe(policy, false)));
		this.usages.inlineRateLimits().forEach((policy) -> rateLimits.add(describe(policy, true)));
		List<BudgetDescriptor> budgets = new ArrayList<>();
		this.budgets.all().forEach((budget) -> budgets.add(describe(budget)));
		List<ConcurrencyDescriptor> caps = new ArrayList<>();
		this.concurrency.all().forEach((cap) -> caps.add(describe(cap, false)));
		this.usages.inlineConcurrency().forEach((cap) -> caps.add(describe(cap, true)));
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
		Optional<RateLimitPolicy> rateLimit = findRateLimit(policy);
		if (rateLimit.isPresent()) {
			String storageKey = this.keys.build(policy, key);
			// A peek takes nothing and starts tracking nothing: it only reports the quota as it stands.
			Decision decision = this.backend.peek(rateLimit.get(), storageKey);
			return new RateLimitKeyState(policy, Kind.RATE_LIMIT.label(), key, storageKey, decision.limit(),
					decision.remaining(), isoDuration(decision.resetAfterMicros()));
		}
		Optional<BudgetPolicy> budget = this.budgets.find(policy);
		if (budget.isPresent()) {
			return budgetState(budget.get(), key);
		}
		Optional<ConcurrencyPolicy> cap = findConcurrency(policy);
		if (cap.isPresent()) {
			return concurrencyState(cap.get(), key);
		}
		return null;
	}

	/**
	 * Resets one key of a rate limit or a budget: its state is deleted, so its
	 * next call finds the full quota. Concurrency caps cannot be reset, since
	 * their permits belong to calls in flight.
	 * @param policy the policy name
	 * @param key the caller's key
	 * @return what was reset
	 * @throws InvalidEndpointRequestException (400) for an unknown policy, a
	 * concurrency cap, or a backend that cannot reset keys
	 */
	@DeleteOperation
	public ResetDescriptor reset(@Selector String policy, @Selector String key) {
		try {
			Optional<RateLimitPolicy> rateLimit = findRateLimit(policy);
			if (rateLimit.isPresent()) {
				String storageKey = this.keys.build(policy, key);
				this.backend.reset(rateLimit.get(), storageKey);
				return new ResetDescriptor(policy, Kind.RATE_LIMIT.label(), key, storageKey);
			}
			Optional<BudgetPolicy> budget = this.budgets.find(policy);
			if (budget.isPresent()) {
				this.costBudgets.reset(budget.get(), key);
				return new ResetDescriptor(policy, Kind.BUDGET.label(), key, budgetStorageKey(policy, key));
			}
		}
		catch (UnsupportedOperationException ex) {
			throw new InvalidEndpointRequestException(ex.getMessage(), ex.getMessage(), ex);
		}
		if (findConcurrency(policy).isPresent()) {
			String reason = "Concurrency cap '" + policy + "' cannot be reset: its permits are released "
					+ "by the calls holding them or expire after their permit-ttl";
			throw new InvalidEndpointRequestException(reason, reason);
		}
		// A DELETE answering null would be 204 No Content, which reads as success.
		String reason = "No rate limit, budget or concurrency cap named '" + policy + "'";
		throw new InvalidEndpointRequestException(reason, reason);
	}

	private Optional<RateLimitPolicy> findRateLimit(String name) {
		return this.rateLimits.find(name).or(() -> this.usages.inlineRateLimit(name));
	}

	private Optional<ConcurrencyPolicy> findConcurrency(String name) {
		return this.concurrency.find(name).or(() -> this.usages.inlineConcurrency(name));
	}

	private BudgetKeyState budgetState(BudgetPolicy budget, String key) {
		BudgetDecision decision = this.costBudgets.remaining(budget, key);
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
		boolean distributed = cap.scope() == ConcurrencyPolicy.Scope.DISTRIBUTED
				&& this.distributedConcurrency != null;
		int inUse = distributed ? this.distributedConcurrency.inUse(cap, key) : this.localConcurrency.inUse(cap, key);
		return new ConcurrencyKeyState(cap.name(), Kind.CONCURRENCY.label(), key, label(cap.scope()), cap.permits(),
				inUse, Math.max(0, cap.permits() - inUse));
	}

	private RateLimitDescriptor describe(RateLimitPolicy policy, boolean inline) {
		boolean rateBased = policy.algorithm().isRateBased();
		return new RateLimitDescriptor(policy.name(), inline, label(policy.algorithm()), policy.capacity(),
				rateBased ? refill(policy.refill()) : null, rateBased ? null : duration(policy.windowMicros()),
				policy.key(), label(policy.failureMode()), label(policy.missingKey()), policy.shadow(),
				duration(policy.maxWaitMicros()), policy.localInstances(), policy.prefetch(), label(policy.visibility()),
				routes(policy.name()), methods(Kind.RATE_LIMIT, policy.name()));
	}

	private BudgetDescriptor describe(BudgetPolicy budget) {
		List<BudgetLimitDescriptor> limits = new ArrayList<>();
		for (BudgetLimit limit : budget.limits()) {
			limits.add(new BudgetLimitDescriptor(window(limit.window()), decimal(limit.amountMicros())));
		}
		return new BudgetDescriptor(budget.name(), budget.unit(), limits, budget.zone().getId(), budget.key(),
				label(budget.failureMode()), duration(budget.reservationTimeoutMicros()), label(budget.onError()),
				label(budget.visibility()), methods(Kind.BUDGET, budget.name()));
	}

	private ConcurrencyDescriptor describe(ConcurrencyPolicy cap, boolean inline) {
		return new ConcurrencyDescriptor(cap.name(), inline, cap.permits(), label(cap.scope()), cap.key(),
				duration(cap.maxWaitMicros()), duration(cap.permitTtlMicros()), label(cap.rejection()),
				label(cap.failureMode()), label(cap.visibility()), methods(Kind.CONCURRENCY, cap.name()));
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
	 */
	public record RateLimitDescriptor(String name, boolean inline, String algorithm, long capacity,
			@Nullable String refill, @Nullable String window, String key, String failureMode, String missingKey,
			boolean shadow, String maxWait, int localInstances, long prefetch, String visibility,
			List<RouteDescriptor> routes, List<MethodDescriptor> methods) {
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
	 */
	public record BudgetDescriptor(String name, String unit, List<BudgetLimitDescriptor> limits, String zone,
			String key, String failureMode, String reservationTimeout, String onError, String visibility,
			List<MethodDescriptor> methods) {
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
	 */
	public record ConcurrencyDescriptor(String name, boolean inline, int permits, String scope, String key,
			String maxWait, String permitTtl, String rejection, String failureMode, String visibility,
			List<MethodDescriptor> methods) {
	}

	/**
	 * A route rule applying a policy.
	 *
	 * @param pattern the path pattern
	 * @param methods the HTTP methods; empty for every method
	 */
	public record RouteDescriptor(String pattern, List<String> methods) {
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
	public sealed interface KeyState permits RateLimitKeyState, BudgetKeyState, ConcurrencyKeyState {
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
	 */
	public record ResetDescriptor(String policy, String type, String key, String storageKey) {
	}

}
