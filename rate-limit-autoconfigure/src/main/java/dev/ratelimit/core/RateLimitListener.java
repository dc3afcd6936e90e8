package dev.ratelimit.core;

/**
 * Hears what the limiter decides and what goes wrong, for metrics and logs.
 * Called on the request thread: implementations must be fast and must not
 * throw. Every method has an empty default.
 */
public interface RateLimitListener {

	/**
	 * A policy decided a call.
	 * @param policy the policy
	 * @param decision its decision
	 * @param source who decided: the backend, the local fallback, or a shadow policy
	 */
	default void decided(RateLimitPolicy policy, Decision decision, DecisionSource source) {
	}

	/**
	 * The backend could not decide a policy and its failure mode applied:
	 * {@link FailureMode#OPEN} let the call through unchecked,
	 * {@link FailureMode#CLOSED} rejected it (a {@link FailureMode#LOCAL}
	 * fallback is reported through {@link #decided}).
	 * @param policy the policy
	 * @param mode the failure mode applied
	 * @param cause the backend's failure
	 */
	default void failedOver(RateLimitPolicy policy, FailureMode mode, RuntimeException cause) {
	}

	/**
	 * The backend went from answering to failing or back; called once per change.
	 * @param available whether it answers now
	 * @param cause the failure when it stopped answering, or {@code null}
	 */
	default void backendAvailabilityChanged(boolean available, RuntimeException cause) {
	}

	/**
	 * A call to the backend finished (one per decision, however many policies).
	 * @param nanos how long it took
	 * @param succeeded whether the backend answered
	 */
	default void backendCalled(long nanos, boolean succeeded) {
	}

	/**
	 * Who made a decision.
	 */
	enum DecisionSource {

		/** The configured backend. */
		BACKEND,

		/** The in-memory fallback of a {@link FailureMode#LOCAL} policy while the backend is unavailable. */
		LOCAL_FALLBACK,

		/** A shadow policy, whose denials are recorded but not enforced. */
		SHADOW

	}

}
