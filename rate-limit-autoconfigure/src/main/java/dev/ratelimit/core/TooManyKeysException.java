package dev.ratelimit.core;

/**
 * Thrown by an in-process store that holds as many keys of a policy as its
 * {@link KeyBound} allows, every one of them still mattering, when a call
 * brings a new key. The store refuses the newcomer rather than forget a key
 * whose state still protects something; the caller applies the policy's
 * {@link FailureMode} to the refused call, as it does when a remote store
 * cannot answer, but without taking the store for unavailable.
 */
public class TooManyKeysException extends RuntimeException {

	private final String policy;

	private final long bound;

	/**
	 * Creates an exception.
	 * @param policy the policy whose keys are at the bound
	 * @param bound the most keys kept per policy
	 */
	public TooManyKeysException(String policy, long bound) {
		super("In-memory store holds " + bound + " keys of policy '" + policy
				+ "', each of which still matters; a new key is refused rather than forget one", null, false, false);
		this.policy = policy;
		this.bound = bound;
	}

	/** @return the policy whose keys are at the bound */
	public String getPolicy() {
		return this.policy;
	}

	/** @return the most keys kept per policy */
	public long getBound() {
		return this.bound;
	}

}
