package dev.ratelimit.core;

/**
 * The state one algorithm keeps for one key, and the decision logic over it, in
 * exact integer arithmetic. The Lua scripts in {@code META-INF/scripts} mirror
 * each subclass line by line, so both backends decide alike.
 * <p>
 * Instances are not thread-safe: callers hold the state's lock while they
 * decide. A state is the {@link KeyedStates.Entry} of its key in the in-memory
 * backend, so that the lock and the fields a decision writes share an object. A
 * decision is made in two steps so that layered policies can be
 * all-or-nothing: {@link #decide} with {@code commit = false} answers as if the
 * cost were taken without taking it; with {@code commit = true} it takes it.
 * Bringing the state up to date (refilling, rolling a window, dropping expired
 * entries) changes no decision and may happen in either step.
 */
public abstract class LimitState extends KeyedStates.Entry {

	/**
	 * Creates the state of a key that has not been seen (or was forgotten): a full
	 * bucket, an empty window.
	 * @param policy the policy
	 * @param nowMicros the current time
	 * @return the state
	 */
	public static LimitState create(RateLimitPolicy policy, long nowMicros) {
		// Each algorithm's factory, typed as LimitState, rather than its constructor here: the JVM would load
		// every algorithm's class to verify this method (each returned as a LimitState), at start-up, where
		// the in-memory backend is created; this way only the algorithms in use are loaded, at their first key.
		return switch (policy.algorithm()) {
			case TOKEN_BUCKET -> TokenBucket.newState(policy, nowMicros);
			case FIXED_WINDOW -> FixedWindow.newState();
			case SLIDING_WINDOW_LOG -> SlidingWindowLog.newState();
			case SLIDING_WINDOW_COUNTER -> SlidingWindowCounter.newState();
			case LEAKY_BUCKET -> LeakyBucket.newState(nowMicros);
			case LEAKY_BUCKET_SHAPING -> ShapingLeakyBucket.newState(nowMicros);
		};
	}

	/**
	 * Decides whether {@code cost} units may be taken now.
	 * @param policy the policy this state belongs to
	 * @param cost units to take, {@code 0 <= cost <= capacity}
	 * @param nowMicros the current time; a time earlier than an earlier call's is
	 * treated as no time passing
	 * @param commit whether to take the cost when allowed
	 * @return the decision, describing the state after taking the cost when allowed
	 */
	public abstract Decision decide(RateLimitPolicy policy, long cost, long nowMicros, boolean commit);

	/**
	 * Gives back units an allowed decision took, as far as they still count: the
	 * state becomes at most what it would be had they never been taken, so a
	 * give-back never makes room the policy would not have had. Units that no
	 * longer count (a window that has passed, an entry that has left the log)
	 * are not given back. Mirrored by each script's {@code refund}.
	 * @param policy the policy this state belongs to
	 * @param cost the units the decision took
	 * @param takenMicros the {@link #receipt} of that decision, which names the
	 * window, entry or bucket level the units were counted in
	 * @param nowMicros the current time
	 * @throws UnsupportedOperationException for an algorithm that cannot give
	 * back exactly (see {@link RateLimitPolicy#outcomeCountingProblem()})
	 */
	public void giveBack(RateLimitPolicy policy, long cost, long takenMicros, long nowMicros) {
		throw new UnsupportedOperationException(policy.algorithm() + " cannot give units back");
	}

	/**
	 * Returns what names the units a decision just took, for {@link #giveBack}:
	 * by default the decision's time, which names the log entry they were counted
	 * in; the windows return when their window began counting, which stays right
	 * when the window size changes. Called right after the decision that took
	 * them, under the same lock.
	 * @param policy the policy this state belongs to
	 * @param cost the units taken
	 * @param nowMicros the time of the decision
	 * @return the receipt, a time in microseconds
	 */
	public long receipt(RateLimitPolicy policy, long cost, long nowMicros) {
		return nowMicros;
	}

}
