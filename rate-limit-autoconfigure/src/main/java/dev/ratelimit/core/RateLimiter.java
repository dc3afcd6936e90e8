package dev.ratelimit.core;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;

import org.jspecify.annotations.Nullable;

import dev.ratelimit.core.LimitListener.DecisionSource;

/**
 * Applies a list of policies to one call: resolves storage keys, validates
 * costs, asks the backend for one all-or-nothing decision, and applies each
 * policy's missing-key, failure and shadow behaviour. Used by the aspect, the
 * servlet filter and programmatic callers.
 * <p>
 * When any policy denies, none is charged, and the outcome still reports every
 * policy's state. When a shaping policy asks the call to wait for its turn,
 * {@link #acquire} waits; {@link #tryAcquire} returns the wait instead.
 * <p>
 * {@link #acquireAsync} and {@link #tryAcquireAsync} decide the same way for a
 * caller that must never block (a reactive event loop): the same keys, costs,
 * merging and failure modes, the backend asked without waiting for its reply
 * (see {@link RateLimitBackend#tryConsumeAllAsync}), and a turn waited for on a
 * timer rather than a sleeping thread.
 * <p>
 * When the backend fails, each policy's {@link FailureMode} applies: open
 * policies let the call through, closed ones reject it as unavailable, local
 * ones are decided by an in-memory fallback. An in-memory store always decides,
 * even at its bound of keys, where new keys share the policy's overflow slots
 * (see {@link KeyBound}). Shadow policies are decided after the enforced ones
 * and never reject.
 */
public final class RateLimiter {

	private static final Logger logger = System.getLogger(RateLimiter.class.getName());

	/** The outcome of a call whose every policy was skipped (a missing key the policies allow). */
	private static final RateLimitOutcome NOTHING_DECIDED = new RateLimitOutcome(List.of(), List.of(),
			ProvisionalTakes.NONE);

	/** Policies whose failed give-back was logged at warning level: once each. */
	private final FirstTimes giveBackFailuresLogged = new FirstTimes();

	private final RateLimitBackend backend;

	private final LimitKeys keys;

	private final Sleeper sleeper;

	private final @Nullable RateLimitBackend localFallback;

	private final LimitListener listener;

	private final Map<RateLimitPolicy, RateLimitPolicy> localShares = new ConcurrentHashMap<>();

	private final StoreHealth health;

	/**
	 * Creates a limiter that waits with {@link Sleeper#system()}, has no local
	 * fallback (local policies fail open) and reports to no listener.
	 * @param backend where decisions are made
	 * @param keys how storage keys are built
	 */
	public RateLimiter(RateLimitBackend backend, LimitKeys keys) {
		this(backend, keys, Sleeper.system());
	}

	/**
	 * Creates a limiter without local fallback or listener.
	 * @param backend where decisions are made
	 * @param keys how storage keys are built
	 * @param sleeper how callers of shaping policies wait for their turn
	 */
	public RateLimiter(RateLimitBackend backend, LimitKeys keys, Sleeper sleeper) {
		this(backend, keys, sleeper, null, LimitListener.NONE);
	}

	/**
	 * Creates a limiter.
	 * @param backend where decisions are made
	 * @param keys how storage keys are built
	 * @param sleeper how callers of shaping policies wait for their turn
	 * @param localFallback the in-memory backend deciding {@link FailureMode#LOCAL}
	 * policies while {@code backend} fails, or {@code null} to let them fail open
	 * @param listener hears decisions and failures
	 */
	public RateLimiter(RateLimitBackend backend, LimitKeys keys, Sleeper sleeper,
			@Nullable RateLimitBackend localFallback, LimitListener listener) {
		this.backend = Objects.requireNonNull(backend, "backend");
		this.keys = Objects.requireNonNull(keys, "keys");
		this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
		this.localFallback = localFallback;
		this.listener = Objects.requireNonNull(listener, "listener");
		this.health = new StoreHealth(LimitKind.RATE_LIMIT, "Rate limit backend", listener, backend.parts());
	}

	/**
	 * Returns whether deciding synchronously ({@link #acquire}) may block the
	 * calling thread: when the backend waits on I/O, or a policy waits for its
	 * turn (wait mode, or the shaping leaky bucket, whose every call but the
	 * first of a burst waits); then so may giving back what a call took. A
	 * caller that must never block decides with {@link #acquireAsync} instead,
	 * and gives back off its thread when this says so.
	 * @param policies the policies to decide
	 * @return whether a synchronous decision or give-back may block
	 */
	public boolean mayBlock(List<? extends RateLimitPolicy> policies) {
		if (this.backend.blocks()) {
			return true;
		}
		for (RateLimitPolicy policy : policies) {
			if (waitsForTurn(policy)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * {@link #mayBlock(List)} for the policies of calls, without collecting
	 * them into a list first (a request's decision asks it every time).
	 * @param requests the calls to decide
	 * @return whether a synchronous decision or give-back may block
	 */
	public boolean mayBlockCalls(List<LimitRequest> requests) {
		if (this.backend.blocks()) {
			return true;
		}
		for (LimitRequest request : requests) {
			if (waitsForTurn(request.policy())) {
				return true;
			}
		}
		return false;
	}

	private static boolean waitsForTurn(RateLimitPolicy policy) {
		return policy.maxWaitMicros() > 0 || policy.algorithm() == Algorithm.LEAKY_BUCKET_SHAPING;
	}

	/**
	 * Applies every request's policy to one call, waiting for the call's turn
	 * when a shaping policy queues it.
	 * @param requests the policies with the call's key and cost
	 * @return the outcome; check {@link RateLimitOutcome#allowed()}
	 * @throws InvalidCostException if a cost is negative or above a policy's capacity
	 * @throws RateLimitKeyMissingException if a key is missing and its policy rejects such calls
	 * @throws RateLimitBackendUnavailableException if the backend fails for a fail-closed policy
	 */
	public RateLimitOutcome acquire(List<LimitRequest> requests) {
		RateLimitOutcome outcome = tryAcquire(requests);
		long delay = outcome.delayMicros();
		if (delay > 0) {
			try {
				this.sleeper.sleepMicros(delay);
			}
			catch (InterruptedException ex) {
				// The turn is taken; proceed and let the caller see the interrupt.
				Thread.currentThread().interrupt();
			}
		}
		return outcome;
	}

	/**
	 * Applies every request's policy to one call without waiting: an allowed
	 * outcome of a shaping policy carries the wait in
	 * {@link RateLimitOutcome#delayMicros()} for the caller to honour.
	 * @param requests the policies with the call's key and cost
	 * @return the outcome
	 */
	public RateLimitOutcome tryAcquire(List<LimitRequest> requests) {
		if (requests.size() == 1) {
			return tryAcquireOne(requests.get(0));
		}
		Plan plan = plan(requests);
		@Nullable Decided decided = plan.enforced.isEmpty() ? null : decide(plan.enforced, plan.byOutcome);
		return outcome(plan, decided, (plan.shadow == null) ? List.of() : decideShadow(plan.shadow));
	}

	/**
	 * Applies every request's policy to one call like {@link #acquire}, without
	 * making the calling thread wait: for a caller that must never block (a
	 * reactive event loop). The backend is asked without waiting for its reply
	 * (on Redis, Lettuce's asynchronous API; in memory, inline), and a turn a
	 * shaping policy gives later is waited for through {@link DecisionThreads#delay}.
	 * @param requests the policies with the call's key and cost
	 * @param threads runs a backend call that can only block, and waits for a turn
	 * @return the outcome, once decided and, in wait mode, once the turn has come;
	 * the stage fails with the exceptions {@link #acquire} throws
	 */
	public CompletionStage<RateLimitOutcome> acquireAsync(List<LimitRequest> requests, DecisionThreads threads) {
		return tryAcquireAsync(requests, threads).thenCompose((outcome) -> {
			long delay = outcome.delayMicros();
			return (delay > 0) ? threads.delay(delay).thenApply((ignored) -> outcome)
					: CompletableFuture.completedFuture(outcome);
		});
	}

	/**
	 * Applies every request's policy to one call like {@link #tryAcquire},
	 * without making the calling thread wait (see {@link #acquireAsync}).
	 * @param requests the policies with the call's key and cost
	 * @param blocking runs a backend call that can only block
	 * @return the outcome; the stage fails with the exceptions {@link #tryAcquire} throws
	 */
	public CompletionStage<RateLimitOutcome> tryAcquireAsync(List<LimitRequest> requests, Executor blocking) {
		Plan plan;
		try {
			plan = plan(requests);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		CompletionStage<Decided> enforced = plan.enforced.isEmpty() ? CompletableFuture.completedFuture(null)
				: decideAsync(plan.enforced, plan.byOutcome, blocking);
		// Shadow policies after the enforced ones, as tryAcquire decides them.
		return enforced.thenCompose((decided) -> ((plan.shadow == null) ? CompletableFuture
			.<List<PolicyDecision>>completedFuture(List.of()) : decideShadowAsync(plan.shadow, blocking))
			.thenApply((shadow) -> outcome(plan, decided, shadow)));
	}

	/**
	 * Turns the requests of one call into what the backend decides: their
	 * acquisitions, those on one storage key (the same policy twice) merged into
	 * one with their costs added, the shadow ones apart.
	 */
	private Plan plan(List<LimitRequest> requests) {
		Map<String, Acquisition> enforced = new LinkedHashMap<>();
		Map<String, Acquisition> shadow = null;
		Set<String> byOutcome = null;
		for (LimitRequest request : requests) {
			Acquisition acquisition = toAcquisition(request);
			if (acquisition == null) {
				continue;
			}
			Map<String, Acquisition> into = enforced;
			if (acquisition.policy().shadow()) {
				// Only calls with shadow policies pay for a second map.
				shadow = (shadow != null) ? shadow : new LinkedHashMap<>();
				into = shadow;
			}
			else if (request.byOutcome() && !enforced.containsKey(acquisition.key())) {
				// Only calls counted by outcome pay for the set.
				byOutcome = (byOutcome != null) ? byOutcome : new HashSet<>();
				byOutcome.add(acquisition.key());
			}
			else if (!request.byOutcome() && byOutcome != null) {
				// Merged with units that always count: the merged units always count.
				byOutcome.remove(acquisition.key());
			}
			into.merge(acquisition.key(), acquisition,
					(a, b) -> new Acquisition(a.policy(), a.key(), checkCost(a.policy(), a.cost() + b.cost())));
		}
		return new Plan(List.copyOf(enforced.values()), (shadow != null) ? List.copyOf(shadow.values()) : null,
				byOutcome);
	}

	/** The outcome of a call: its enforced policies' decisions, its shadow ones', what it took provisionally. */
	private RateLimitOutcome outcome(Plan plan, @Nullable Decided decided, List<PolicyDecision> shadowDecisions) {
		List<PolicyDecision> decisions = (decided != null) ? decided.decisions : List.of();
		ProvisionalTakes provisional = (decided != null && plan.byOutcome != null)
				? provisional(decided, plan.byOutcome, decisions) : ProvisionalTakes.NONE;
		return new RateLimitOutcome(decisions, shadowDecisions, provisional);
	}

	/**
	 * {@link #tryAcquire} for the usual call, one policy: the same steps without
	 * the maps that merge several.
	 */
	private RateLimitOutcome tryAcquireOne(LimitRequest request) {
		Acquisition acquisition = toAcquisition(request);
		if (acquisition == null) {
			return NOTHING_DECIDED;
		}
		if (acquisition.policy().shadow()) {
			return new RateLimitOutcome(List.of(), decideShadow(List.of(acquisition)), ProvisionalTakes.NONE);
		}
		@Nullable Set<String> byOutcome = request.byOutcome() ? Set.of(acquisition.key()) : null;
		Decided decided = decide(List.of(acquisition), byOutcome);
		ProvisionalTakes provisional = (byOutcome != null) ? provisional(decided, byOutcome, decided.decisions)
				: ProvisionalTakes.NONE;
		return new RateLimitOutcome(decided.decisions, List.of(), provisional);
	}

	/**
	 * Collects what an allowed call took for its policies counted by outcome;
	 * nothing when the call was denied, since then nothing was taken.
	 */
	private ProvisionalTakes provisional(Decided decided, Set<String> byOutcome, List<PolicyDecision> decisions) {
		if (decided.takes == null || decisions.stream().anyMatch((pd) -> !pd.decision().allowed())) {
			return ProvisionalTakes.NONE;
		}
		List<ProvisionalTakes.Taken> taken = new ArrayList<>();
		for (int i = 0; i < decided.acquisitions.size(); i++) {
			Acquisition acquisition = decided.acquisitions.get(i);
			String receipt = decided.takes.get(i).receipt();
			// A receipt: the decision took units that can be given back (Take#tookUnits).
			if (byOutcome.contains(acquisition.key()) && receipt != null) {
				taken.add(new ProvisionalTakes.Taken(acquisition.policy(), acquisition.key(), acquisition.cost(),
						receipt, decided.local));
			}
		}
		return taken.isEmpty() ? ProvisionalTakes.NONE : new ProvisionalTakes(this, taken);
	}

	/**
	 * Gives back what a call took provisionally, to the store that took it (the
	 * backend, or the local fallback with the policy's local share). A failure
	 * leaves the units counted, which never exceeds the limit: it is reported to
	 * the listener, and logged once per policy at warning level, then at debug.
	 */
	void giveBack(ProvisionalTakes.Taken taken) {
		RateLimitBackend on = taken.local()
				? Objects.requireNonNull(this.localFallback, "units taken locally were taken by the local fallback")
				: this.backend;
		try {
			on.giveBack(taken.policy(), taken.key(), taken.cost(), taken.receipt());
			this.listener.gaveBack(taken.policy(), true);
		}
		catch (RuntimeException ex) {
			this.listener.gaveBack(taken.policy(), false);
			String message = "Could not give back " + taken.cost() + " unit(s) to policy '" + taken.policy().name()
					+ "'; they stay counted until the policy restores them: " + ex;
			// An outage the backend told of already is not warned of again, per policy.
			if (!AnnouncedOutage.in(ex) && this.giveBackFailuresLogged.first(taken.policy().name())) {
				logger.log(Level.WARNING, message + " (further failures of this policy are logged at debug level)");
			}
			else {
				logger.log(Level.DEBUG, message);
			}
		}
	}

	/**
	 * Applies one policy, throwing when it denies.
	 * @param policy the policy
	 * @param key the caller's key, or {@code null}
	 * @param cost the cost
	 * @return the outcome, always allowed
	 * @throws RateLimitExceededException when the policy denies
	 */
	public RateLimitOutcome acquireOrThrow(RateLimitPolicy policy, @Nullable String key, long cost) {
		RateLimitOutcome outcome = acquire(List.of(new LimitRequest(policy, key, cost)));
		if (!outcome.allowed()) {
			throw new RateLimitExceededException(outcome);
		}
		return outcome;
	}

	private @Nullable Acquisition toAcquisition(LimitRequest request) {
		RateLimitPolicy policy = request.policy();
		long cost = checkCost(policy, request.cost());
		String value = request.key();
		if (value == null) {
			switch (policy.missingKey()) {
				case ALLOW:
					return null;
				case REJECT:
					throw new RateLimitKeyMissingException(policy.name(), policy.key());
				default:
					// SHARED: every keyless caller counts against one bucket.
					return new Acquisition(policy, this.keys.sharedKey(policy.name()), cost);
			}
		}
		return new Acquisition(policy, this.keys.build(policy.name(), value), cost);
	}

	/**
	 * Decides the enforced policies.
	 * @param byOutcome the storage keys counted by outcome, or {@code null} when
	 * none is: only then does the backend say what it took
	 */
	private Decided decide(List<Acquisition> acquisitions, @Nullable Set<String> byOutcome) {
		Decided decided;
		long start = System.nanoTime();
		try {
			decided = consume(this.backend, acquisitions, byOutcome != null, false);
		}
		catch (RuntimeException ex) {
			return failed(acquisitions, byOutcome, start, ex);
		}
		return answered(decided, start);
	}

	/**
	 * Decides the enforced policies like {@link #decide}, the backend asked
	 * without waiting; its answer or failure is handled by the same steps.
	 */
	private CompletionStage<Decided> decideAsync(List<Acquisition> acquisitions, @Nullable Set<String> byOutcome,
			Executor blocking) {
		long start = System.nanoTime();
		boolean take = byOutcome != null;
		CompletionStage<Decided> consumed = AsyncCalls.started(() -> take
				? this.backend.tryTakeAllAsync(acquisitions, blocking)
					.thenApply((takes) -> Decided.ofTakes(acquisitions, takes, false))
				: this.backend.tryConsumeAllAsync(acquisitions, blocking)
					.thenApply((raw) -> new Decided(acquisitions, raw, null, false)));
		return consumed.handle((decided, failure) -> (failure == null) ? answered(decided, start)
				: failed(acquisitions, byOutcome, start, AsyncCalls.cause(failure)));
	}

	/** What follows the backend's answer, whichever way it was asked. */
	private Decided answered(Decided decided, long start) {
		this.listener.storeCalled(LimitKind.RATE_LIMIT, System.nanoTime() - start, true);
		this.health.answered(firstKey(decided.acquisitions));
		return decided.report(this.listener, DecisionSource.STORE);
	}

	/** What follows the backend's failure, whichever way it was asked: the failure modes. */
	private Decided failed(List<Acquisition> acquisitions, @Nullable Set<String> byOutcome, long start,
			RuntimeException ex) {
		this.listener.storeCalled(LimitKind.RATE_LIMIT, System.nanoTime() - start, false);
		this.health.failed(firstKey(acquisitions), ex);
		return failOver(acquisitions, byOutcome, ex);
	}

	private static @Nullable String firstKey(List<Acquisition> acquisitions) {
		return acquisitions.isEmpty() ? null : acquisitions.get(0).key();
	}

	/**
	 * Asks a backend for an all-or-nothing decision.
	 */
	private static Decided consume(RateLimitBackend on, List<Acquisition> acquisitions, boolean take, boolean local) {
		if (take) {
			return Decided.ofTakes(acquisitions, on.tryTakeAll(acquisitions), local);
		}
		return new Decided(acquisitions, on.tryConsumeAll(acquisitions), null, local);
	}

	/**
	 * Applies the failure modes: closed rejects the whole call, local policies are
	 * decided in memory (all or nothing among themselves), open ones pass.
	 */
	private Decided failOver(List<Acquisition> acquisitions, @Nullable Set<String> byOutcome,
			RuntimeException cause) {
		for (Acquisition acquisition : acquisitions) {
			if (acquisition.policy().failureMode() == FailureMode.CLOSED) {
				// Before any other policy falls back: a call with a closed policy is refused as a whole.
				FailureModes.apply(acquisition.policy(), cause, false, this.listener);
			}
		}
		List<Acquisition> local = new ArrayList<>();
		for (Acquisition acquisition : acquisitions) {
			RateLimitPolicy policy = acquisition.policy();
			if (FailureModes.apply(policy, cause, this.localFallback != null,
					this.listener) == FailureModes.Fallback.LOCAL) {
				RateLimitPolicy share = this.localShares.computeIfAbsent(policy, RateLimitPolicy::localShare);
				// A cost the full policy accepts must not become an error against the smaller share.
				local.add(new Acquisition(share, acquisition.key(), Math.min(acquisition.cost(), share.capacity())));
			}
		}
		if (local.isEmpty()) {
			return new Decided(List.of(), List.of(), null, true);
		}
		RateLimitBackend fallback = Objects.requireNonNull(this.localFallback,
				"policies fall back locally only when there is a local fallback");
		return consume(fallback, local, byOutcome != null, true).report(this.listener,
				DecisionSource.LOCAL_FALLBACK);
	}

	/**
	 * Decides shadow policies one by one, so that a shadow denial charges nothing
	 * and blocks nothing; a backend failure only skips them.
	 */
	private List<PolicyDecision> decideShadow(Iterable<Acquisition> acquisitions) {
		List<PolicyDecision> result = new ArrayList<>();
		for (Acquisition acquisition : acquisitions) {
			try {
				shadowDecided(result, acquisition, this.backend.tryConsume(acquisition.policy(), acquisition.key(),
						acquisition.cost()));
			}
			catch (RuntimeException ex) {
				this.health.failed(acquisition.key(), ex);
			}
		}
		return result;
	}

	/** Decides shadow policies one by one like {@link #decideShadow}, the backend asked without waiting. */
	private CompletionStage<List<PolicyDecision>> decideShadowAsync(List<Acquisition> acquisitions,
			Executor blocking) {
		List<PolicyDecision> result = new ArrayList<>();
		CompletionStage<Void> done = CompletableFuture.completedFuture(null);
		for (Acquisition acquisition : acquisitions) {
			done = done.thenCompose((ignored) -> AsyncCalls
				.started(() -> this.backend.tryConsumeAllAsync(List.of(acquisition), blocking))
				.handle((decisions, failure) -> {
					if (failure == null) {
						shadowDecided(result, acquisition, decisions.get(0));
					}
					else {
						this.health.failed(acquisition.key(), AsyncCalls.cause(failure));
					}
					return null;
				}));
		}
		return done.thenApply((ignored) -> result);
	}

	private void shadowDecided(List<PolicyDecision> result, Acquisition acquisition, Decision decision) {
		result.add(new PolicyDecision(acquisition.policy(), decision));
		decided(this.listener, acquisition, decision, DecisionSource.SHADOW);
	}

	/**
	 * A call's acquisitions as the backend decides them.
	 *
	 * @param enforced the enforced policies' acquisitions, one per storage key
	 * @param shadow the shadow policies', or {@code null} when there is none
	 * @param byOutcome the storage keys counted by outcome, or {@code null} when none is
	 */
	private record Plan(List<Acquisition> enforced, @Nullable List<Acquisition> shadow,
			@Nullable Set<String> byOutcome) {
	}

	/**
	 * The acquisitions a backend decided, its decisions in the same order (as
	 * policy decisions once reported), what it took when asked to say, and
	 * whether it was the local fallback.
	 */
	private static final class Decided {

		final List<Acquisition> acquisitions;

		List<PolicyDecision> decisions;

		private final List<Decision> raw;

		final @Nullable List<Take> takes;

		final boolean local;

		Decided(List<Acquisition> acquisitions, List<Decision> raw, @Nullable List<Take> takes, boolean local) {
			this.acquisitions = acquisitions;
			this.raw = raw;
			this.decisions = List.of();
			this.takes = takes;
			this.local = local;
		}

		static Decided ofTakes(List<Acquisition> acquisitions, List<Take> takes, boolean local) {
			return new Decided(acquisitions, takes.stream().map(Take::decision).toList(), takes, local);
		}

		Decided report(LimitListener listener, DecisionSource source) {
			if (this.raw.size() == 1) {
				// One decision: an immutable list of one, which the outcome keeps without copying.
				RateLimitPolicy policy = this.acquisitions.get(0).policy();
				Decision decision = this.raw.get(0);
				this.decisions = List.of(new PolicyDecision(policy, decision));
				decided(listener, this.acquisitions.get(0), decision, source);
				return this;
			}
			List<PolicyDecision> result = new ArrayList<>(this.raw.size());
			for (int i = 0; i < this.raw.size(); i++) {
				RateLimitPolicy policy = this.acquisitions.get(i).policy();
				result.add(new PolicyDecision(policy, this.raw.get(i)));
				decided(listener, this.acquisitions.get(i), this.raw.get(i), source);
			}
			this.decisions = result;
			return this;
		}

	}

	/** Tells the listener of one policy's decision, with the key, the cost and what it left. */
	private static void decided(LimitListener listener, Acquisition acquisition, Decision decision,
			DecisionSource source) {
		listener.decided(acquisition.policy(), acquisition.key(), acquisition.cost(), decision.allowed(),
				decision.remaining(), decision.limit(), source);
	}

	private static long checkCost(RateLimitPolicy policy, long cost) {
		if (cost < 0) {
			throw new InvalidCostException(policy.name(),
					"Cost " + cost + " for policy '" + policy.name() + "' is negative");
		}
		if (cost > policy.capacity()) {
			throw new InvalidCostException(policy.name(), "Cost " + cost + " exceeds the capacity "
					+ policy.capacity() + " of policy '" + policy.name() + "' and can never succeed");
		}
		return cost;
	}

}
