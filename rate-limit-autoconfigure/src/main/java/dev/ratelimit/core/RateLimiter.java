package dev.ratelimit.core;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Applies a list of policies to one call: resolves storage keys, validates
 * costs, asks the backend for one all-or-nothing decision, and applies each
 * policy's missing-key and failure behaviour. Used by the aspect, the servlet
 * filter and programmatic callers.
 * <p>
 * When any policy denies, none is charged, and the outcome still reports every
 * policy's state. When a shaping policy asks the call to wait for its turn,
 * {@link #acquire} waits; {@link #tryAcquire} returns the wait instead.
 */
public final class RateLimiter {

	private static final Logger logger = System.getLogger(RateLimiter.class.getName());

	private final RateLimitBackend backend;

	private final LimitKeys keys;

	private final Sleeper sleeper;

	private final AtomicBoolean backendFailing = new AtomicBoolean();

	/**
	 * Creates a limiter that waits with {@link Sleeper#system()}.
	 * @param backend where decisions are made
	 * @param keys how storage keys are built
	 */
	public RateLimiter(RateLimitBackend backend, LimitKeys keys) {
		this(backend, keys, Sleeper.system());
	}

	/**
	 * Creates a limiter.
	 * @param backend where decisions are made
	 * @param keys how storage keys are built
	 * @param sleeper how callers of shaping policies wait for their turn
	 */
	public RateLimiter(RateLimitBackend backend, LimitKeys keys, Sleeper sleeper) {
		this.backend = backend;
		this.keys = keys;
		this.sleeper = sleeper;
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
		Map<String, Acquisition> byKey = new LinkedHashMap<>();
		for (LimitRequest request : requests) {
			Acquisition acquisition = toAcquisition(request);
			if (acquisition != null) {
				byKey.merge(acquisition.key(), acquisition, (a, b) -> new Acquisition(a.policy(), a.key(),
						checkCost(a.policy(), a.cost() + b.cost())));
			}
		}
		if (byKey.isEmpty()) {
			return new RateLimitOutcome(List.of());
		}
		List<Acquisition> acquisitions = List.copyOf(byKey.values());
		List<Decision> decisions = decide(acquisitions);
		if (decisions == null) {
			return new RateLimitOutcome(List.of());
		}
		List<PolicyDecision> result = new ArrayList<>(decisions.size());
		for (int i = 0; i < decisions.size(); i++) {
			result.add(new PolicyDecision(acquisitions.get(i).policy(), decisions.get(i)));
		}
		return new RateLimitOutcome(result);
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

	private List<Decision> decide(List<Acquisition> acquisitions) {
		try {
			List<Decision> decisions = this.backend.tryConsumeAll(acquisitions);
			if (this.backendFailing.compareAndSet(true, false)) {
				logger.log(Level.INFO, "Rate limit backend answers again");
			}
			return decisions;
		}
		catch (RuntimeException ex) {
			if (this.backendFailing.compareAndSet(false, true)) {
				logger.log(Level.WARNING, "Rate limit backend failed; applying each policy's failure mode", ex);
			}
			for (Acquisition acquisition : acquisitions) {
				if (acquisition.policy().failureMode() == FailureMode.CLOSED) {
					throw new RateLimitBackendUnavailableException(acquisition.policy().name(), ex);
				}
			}
			return null;
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
