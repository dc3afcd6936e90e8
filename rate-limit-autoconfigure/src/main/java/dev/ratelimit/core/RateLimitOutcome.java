package dev.ratelimit.core;

import java.util.List;

/**
 * The combined answer of every policy applied to one call. The call is allowed
 * only when every policy allowed it; the wait is the longest among the policies
 * that denied.
 *
 * @param decisions the enforced policies' decisions, in the order the policies
 * were applied; a policy that was skipped (missing key with {@code allow}, or a
 * failed-open backend) has none
 * @param shadowDecisions the decisions of shadow policies, reported but never
 * enforced
 * @param provisional the units taken for policies that count the call by its
 * outcome, to settle once the outcome is known; {@link ProvisionalTakes#NONE}
 * when none were
 */
public record RateLimitOutcome(List<PolicyDecision> decisions, List<PolicyDecision> shadowDecisions,
		ProvisionalTakes provisional) {

	/**
	 * Creates an outcome.
	 */
	public RateLimitOutcome {
		decisions = List.copyOf(decisions);
		shadowDecisions = List.copyOf(shadowDecisions);
		provisional = (provisional != null) ? provisional : ProvisionalTakes.NONE;
	}

	/**
	 * Creates an outcome with nothing taken provisionally.
	 * @param decisions the decisions
	 * @param shadowDecisions the decisions of shadow policies
	 */
	public RateLimitOutcome(List<PolicyDecision> decisions, List<PolicyDecision> shadowDecisions) {
		this(decisions, shadowDecisions, ProvisionalTakes.NONE);
	}

	/**
	 * Creates an outcome without shadow policies.
	 * @param decisions the decisions
	 */
	public RateLimitOutcome(List<PolicyDecision> decisions) {
		this(decisions, List.of());
	}

	/** @return whether every policy allowed the call */
	public boolean allowed() {
		// Indexed loops here and below: an iterator per call is an object per request on the HTTP path.
		for (int i = 0; i < this.decisions.size(); i++) {
			if (!this.decisions.get(i).decision().allowed()) {
				return false;
			}
		}
		return true;
	}

	/** @return the names of the policies that denied the call, in order */
	public List<String> violatedPolicies() {
		return this.decisions.stream()
			.filter((pd) -> !pd.decision().allowed())
			.map((pd) -> pd.policy().name())
			.toList();
	}

	/**
	 * Returns how long an allowed call waits for its turn (shaping policies).
	 * @return the longest delay in microseconds; 0 when denied or unshaped
	 */
	public long delayMicros() {
		if (!allowed()) {
			return 0;
		}
		long max = 0;
		for (int i = 0; i < this.decisions.size(); i++) {
			max = Math.max(max, this.decisions.get(i).decision().delayMicros());
		}
		return max;
	}

	/** @return the longest wait among the denying policies in microseconds; 0 when allowed */
	public long retryAfterMicros() {
		long max = 0;
		for (int i = 0; i < this.decisions.size(); i++) {
			max = Math.max(max, this.decisions.get(i).decision().retryAfterMicros());
		}
		return max;
	}

}
