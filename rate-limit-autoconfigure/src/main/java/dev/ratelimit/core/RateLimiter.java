package dev.ratelimit.core;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Applies a list of policies to one call: resolves storage keys, validates
 * costs, asks the backend, and applies each policy's missing-key and failure
 * behaviour. Used by the aspect, the servlet filter and programmatic callers.
 * <p>
 * Policies are applied in order and the first denial stops the evaluation, so
 * later policies are not charged for a call that is refused anyway.
 */
public final class RateLimiter {

	private static final Logger logger = System.getLogger(RateLimiter.class.getName());

	private final RateLimitBackend backend;

	private final LimitKeys keys;

	private final AtomicBoolean backendFailing = new AtomicBoolean();

	/**
	 * Creates a limiter.
	 * @param backend where decisions are made
	 * @param keys how storage keys are built
	 */
	public RateLimiter(RateLimitBackend backend, LimitKeys keys) {
		this.backend = backend;
		this.keys = keys;
	}

	/**
	 * Applies every request's policy to one call.
	 * @param requests the policies with the call's key and cost
	 * @return the outcome; check {@link RateLimitOutcome#allowed()}
	 * @throws InvalidCostException if a cost is negative or above a policy's capacity
	 * @throws RateLimitKeyMissingException if a key is missing and its policy rejects such calls
	 * @throws RateLimitBackendUnavailableException if the backend fails for a fail-closed policy
	 */
	public RateLimitOutcome acquire(List<LimitRequest> requests) {
		List<PolicyDecision> decisions = new ArrayList<>(requests.size());
		for (LimitRequest request : requests) {
			Decision decision = decide(request);
			if (decision != null) {
				decisions.add(new PolicyDecision(request.policy(), decision));
				if (!decision.allowed()) {
					break;
				}
			}
		}
		return new RateLimitOutcome(decisions);
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

	private Decision decide(LimitRequest request) {
		RateLimitPolicy policy = request.policy();
		checkCost(policy, request.cost());
		String value = request.key();
		if (value == null) {
			switch (policy.missingKey()) {
				case ALLOW:
					return null;
				case REJECT:
					throw new RateLimitKeyMissingException(policy.name(), policy.key());
				default:
					// SHARED: every keyless caller counts against one bucket below.
			}
		}
		String storageKey = (value != null) ? this.keys.build(policy.name(), value)
				: this.keys.sharedKey(policy.name());
		try {
			Decision decision = this.backend.tryConsume(policy, storageKey, request.cost());
			if (this.backendFailing.compareAndSet(true, false)) {
				logger.log(Level.INFO, "Rate limit backend answers again");
			}
			return decision;
		}
		catch (RuntimeException ex) {
			if (this.backendFailing.compareAndSet(false, true)) {
				logger.log(Level.WARNING, "Rate limit backend failed; applying each policy's failure mode", ex);
			}
			if (policy.failureMode() == FailureMode.CLOSED) {
				throw new RateLimitBackendUnavailableException(policy.name(), ex);
			}
			return null;
		}
	}

	private static void checkCost(RateLimitPolicy policy, long cost) {
		if (cost < 0) {
			throw new InvalidCostException(policy.name(),
					"Cost " + cost + " for policy '" + policy.name() + "' is negative");
		}
		if (cost > policy.capacity()) {
			throw new InvalidCostException(policy.name(), "Cost " + cost + " exceeds the capacity "
					+ policy.capacity() + " of policy '" + policy.name() + "' and can never be allowed");
		}
	}

}
