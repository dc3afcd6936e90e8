package dev.ratelimit.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

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
 * When the backend fails, each policy's {@link FailureMode} applies: open
 * policies let the call through, closed ones reject it as unavailable, local
 * ones are decided by an in-memory fallback. The same applies, per policy, to
 * a new key that an in-memory store refuses to track because it holds its
 * bound of keys ({@link TooManyKeysException}), except that local policies
 * then pass too: their in-memory store is the full one. Shadow policies are
 * decided after the enforced ones and never reject.
 */
public final class RateLimiter {

	private final RateLimitBackend backend;

	private final LimitKeys keys;

	private final Sleeper sleeper;

	private final RateLimitBackend localFallback;

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
	public RateLimiter(RateLimitBackend backend, LimitKeys keys, Sleeper sleeper, RateLimitBackend localFallback,
			LimitListener listener) {
		this.backend = Objects.requireNonNull(backend, "backend");
		this.keys = Objects.requireNonNull(keys, "keys");
		this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
		this.localFallback = localFallback;
		this.listener = Objects.requireNonNull(listener, "listener");
		this.health = new StoreHealth(LimitKind.RATE_LIMIT, "Rate limit backend", listener);
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
		// Several policies on one storage key (the same policy twice) become one, costs added.
		Map<String, Acquisition> enforced = new LinkedHashMap<>();
		Map<String, Acquisition> shadow = null;
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
			into.merge(acquisition.key(), acquisition,
					(a, b) -> new Acquisition(a.policy(), a.key(), checkCost(a.policy(), a.cost() + b.cost())));
		}
		List<PolicyDecision> decisions = enforced.isEmpty() ? List.of() : decide(List.copyOf(enforced.values()));
		List<PolicyDecision> shadowDecisions = (shadow == null) ? List.of() : decideShadow(shadow.values());
		return new RateLimitOutcome(decisions, shadowDecisions);
	}

	/**
	 * Applies one policy, throwing when it denies.
	 * @param policy the policy
	 * @param key the caller's key, or {@code null}
	 * @param cost the cost
	 * @return the outcome, always allowed
	 * @throws RateLimitExceededException when the policy denies
	 */
	public RateLimitOutcome acquireOrThrow(RateLimitPolicy policy, String key, long cost) {
		RateLimitOutcome outcome = acquire(List.of(new LimitRequest(policy, key, cost)));
		if (!outcome.allowed()) {
			throw new RateLimitExceededException(outcome);
		}
		return outcome;
	}

	private Acquisition toAcquisition(LimitRequest request) {
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

	private List<PolicyDecision> decide(List<Acquisition> acquisitions) {
		Decided decided;
		long start = System.nanoTime();
		try {
			decided = consumeTracked(this.backend, acquisitions);
		}
		catch (RateLimitBackendUnavailableException ex) {
			// A fail-closed policy whose store will not track one more key: the store did answer.
			this.listener.storeCalled(LimitKind.RATE_LIMIT, System.nanoTime() - start, true);
			throw ex;
		}
		catch (RuntimeException ex) {
			this.listener.storeCalled(LimitKind.RATE_LIMIT, System.nanoTime() - start, false);
			this.health.failed(ex);
			return failOver(acquisitions, ex);
		}
		this.listener.storeCalled(LimitKind.RATE_LIMIT, System.nanoTime() - start, true);
		this.health.answered();
		return decided.report(this.listener, DecisionSource.STORE);
	}

	/**
	 * Asks a backend for an all-or-nothing decision. When an in-memory store
	 * refuses to track a new key (it holds its bound of keys that still matter),
	 * that policy's failure mode applies to it and the others are decided
	 * without it: closed refuses the call, open and local skip the policy
	 * (local has no other in-memory store to turn to).
	 */
	private Decided consumeTracked(RateLimitBackend on, List<Acquisition> acquisitions) {
		List<Acquisition> pending = acquisitions;
		while (true) {
			try {
				return new Decided(pending, pending.isEmpty() ? List.of() : on.tryConsumeAll(pending));
			}
			catch (TooManyKeysException ex) {
				List<Acquisition> rest = new ArrayList<>(pending.size());
				for (Acquisition acquisition : pending) {
					if (acquisition.policy().name().equals(ex.getPolicy())) {
						FailureModes.apply(acquisition.policy(), ex, false, this.listener);
					}
					else {
						rest.add(acquisition);
					}
				}
				if (rest.size() == pending.size()) {
					// Not one of this call's policies: nothing to skip, so no way forward.
					throw ex;
				}
				pending = rest;
			}
		}
	}

	/**
	 * Applies the failure modes: closed rejects the whole call, local policies are
	 * decided in memory (all or nothing among themselves), open ones pass.
	 */
	private List<PolicyDecision> failOver(List<Acquisition> acquisitions, RuntimeException cause) {
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
			return List.of();
		}
		return consumeTracked(this.localFallback, local).report(this.listener, DecisionSource.LOCAL_FALLBACK);
	}

	/**
	 * Decides shadow policies one by one, so that a shadow denial charges nothing
	 * and blocks nothing; a backend failure only skips them.
	 */
	private List<PolicyDecision> decideShadow(Iterable<Acquisition> acquisitions) {
		List<PolicyDecision> result = new ArrayList<>();
		for (Acquisition acquisition : acquisitions) {
			try {
				Decision decision = this.backend.tryConsume(acquisition.policy(), acquisition.key(),
						acquisition.cost());
				result.add(new PolicyDecision(acquisition.policy(), decision));
				this.listener.decided(acquisition.policy(), decision.allowed(), DecisionSource.SHADOW);
			}
			catch (TooManyKeysException ex) {
				// Shadow policies never reject: an untracked key is simply not decided.
			}
			catch (RuntimeException ex) {
				this.health.failed(ex);
			}
		}
		return result;
	}

	/**
	 * The acquisitions a backend decided and its decisions, in the same order.
	 */
	private record Decided(List<Acquisition> acquisitions, List<Decision> decisions) {

		List<PolicyDecision> report(LimitListener listener, DecisionSource source) {
			List<PolicyDecision> result = new ArrayList<>(this.decisions.size());
			for (int i = 0; i < this.decisions.size(); i++) {
				RateLimitPolicy policy = this.acquisitions.get(i).policy();
				result.add(new PolicyDecision(policy, this.decisions.get(i)));
				listener.decided(policy, this.decisions.get(i).allowed(), source);
			}
			return result;
		}

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
