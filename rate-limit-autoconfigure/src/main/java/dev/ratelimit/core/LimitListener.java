package dev.ratelimit.core;

import java.lang.reflect.Method;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Hears what the limits of every kind decide and what goes wrong with their
 * stores: one SPI for rate limits, budgets and concurrency caps, on which the
 * metrics are built. Register beans of this type; every one is called, in
 * order. Called on the request thread: implementations must be fast and must
 * not throw. Every method has an empty default.
 */
public interface LimitListener {

	/** A listener that hears nothing. */
	LimitListener NONE = new LimitListener() {
	};

	/**
	 * A limit decided a call: a rate limit allowed or denied it, a budget admitted
	 * or refused its reservation, a concurrency cap granted or refused a permit.
	 * @param limit the limit
	 * @param allowed whether the call may proceed as far as this limit goes
	 * @param source who decided
	 */
	default void decided(Limit limit, boolean allowed, DecisionSource source) {
	}

	/**
	 * A limit decided one caller's call, with what the call asked for and what
	 * it left: what the heavy hitters, the near-limit counter and traces hear.
	 * Every decision reported to {@link #decided(Limit, boolean, DecisionSource)}
	 * is reported here first; the default passes it on there, so a listener
	 * implements one or the other. Called on the request thread for every
	 * decision: do not allocate here on an admitted call.
	 * @param limit the limit
	 * @param key the key the call counted under: for a rate limit or a budget its
	 * storage key ({@link LimitKeys#callerValue} gives back the caller's value),
	 * for a concurrency cap the caller's value; {@code null} when the limit
	 * keeps no key for the call (a cap without a key expression)
	 * @param units what the call asked for: tokens of a rate limit, micro-units
	 * of a budget reserved, one permit of a cap
	 * @param allowed whether the call may proceed as far as this limit goes
	 * @param remaining what the key has left after the decision, in the same
	 * units, or -1 when the limit cannot say (a cap)
	 * @param capacity the key's whole allowance in the same units (for a budget
	 * with several limits, the one with the least share left), or -1 when the
	 * limit cannot say
	 * @param source who decided
	 */
	default void decided(Limit limit, @Nullable String key, long units, boolean allowed, long remaining,
			long capacity, DecisionSource source) {
		decided(limit, allowed, source);
	}

	/**
	 * A limit's store could not decide a call (it was unavailable) and the
	 * limit's failure mode applied:
	 * {@link FailureMode#OPEN} let the call through unchecked,
	 * {@link FailureMode#CLOSED} refused it, {@link FailureMode#LOCAL} decided it
	 * in memory (the decision follows through {@link #decided} with
	 * {@link DecisionSource#LOCAL_FALLBACK}).
	 * @param limit the limit
	 * @param mode the failure mode applied
	 * @param cause why the store could not decide
	 */
	default void fellBack(Limit limit, FailureMode mode, RuntimeException cause) {
	}

	/**
	 * A store of one kind of limit went from answering to failing or back; called
	 * once per change.
	 * @param kind the kind of limit the store serves
	 * @param available whether it answers now
	 * @param cause the failure when it stopped answering, or {@code null}
	 */
	default void storeAvailabilityChanged(LimitKind kind, boolean available, @Nullable RuntimeException cause) {
	}

	/**
	 * A part of a store of one kind of limit (a Redis Cluster master; see
	 * {@link StoreParts}) went from answering to failing or back; called once per
	 * change of each part. {@link #storeAvailabilityChanged} follows when the
	 * first part fails and when the last one answers again.
	 * @param kind the kind of limit the store serves
	 * @param part the part, {@code ""} for the store as a whole
	 * @param available whether it answers now
	 * @param cause the failure when it stopped answering, or {@code null}
	 */
	default void storePartAvailabilityChanged(LimitKind kind, String part, boolean available,
			@Nullable RuntimeException cause) {
	}

	/**
	 * A call to a store finished (one per decision, however many limits of the
	 * kind it decided at once).
	 * @param kind the kind of limit the store serves
	 * @param nanos how long it took
	 * @param succeeded whether the store answered
	 */
	default void storeCalled(LimitKind kind, long nanos, boolean succeeded) {
	}

	/**
	 * A call was decided by its limit's default plan because its plan expression
	 * named no plan: it yielded nothing or failed ({@code unknown} false), or it
	 * named a plan the limit does not have ({@code unknown} true).
	 * @param limit the limit
	 * @param unknown whether a plan was named but is not one of the limit's
	 */
	default void planDefaulted(Limit limit, boolean unknown) {
	}

	/**
	 * A budget was charged a call's cost, when the call was settled.
	 * @param budget the budget
	 * @param amountMicros the cost charged, in micro-units of the budget's unit
	 */
	default void charged(Limit budget, long amountMicros) {
	}

	/**
	 * A limited method's own limits refused a call, and the fallback method it
	 * names was called instead of throwing the refusal.
	 * @param method the limited method
	 * @param refusal the refusal the fallback took
	 */
	default void fallbackCalled(Method method, RateLimitException refusal) {
	}

	/**
	 * A rate limit that counts calls by their outcome gave back the units of a
	 * call whose outcome did not count, or failed to (the units then stay
	 * counted until the policy restores them).
	 * @param limit the rate limit
	 * @param succeeded whether the units were given back
	 */
	default void gaveBack(Limit limit, boolean succeeded) {
	}

	/**
	 * An adaptive concurrency cap shed a call because its class was beyond its
	 * share while the cap was full; a shadow cap let it run instead.
	 * @param cap the adaptive cap
	 * @param priority the call's class: {@code critical}, {@code normal}, {@code background} or {@code sheddable}
	 * @param shadow whether the cap is a shadow cap, which let the call run
	 */
	default void shed(Limit cap, String priority, boolean shadow) {
	}

	/**
	 * Returns a listener passing every event to several, in order.
	 * @param listeners the listeners
	 * @return one listener for all of them
	 */
	static LimitListener of(List<? extends LimitListener> listeners) {
		List<LimitListener> all = List.copyOf(listeners);
		if (all.isEmpty()) {
			return NONE;
		}
		return (all.size() == 1) ? all.get(0) : new CompositeLimitListener(all);
	}

	/**
	 * Who made a decision.
	 */
	enum DecisionSource {

		/** The limit's own store: the configured backend, budget store or permit store. */
		STORE,

		/** The in-memory fallback of a {@link FailureMode#LOCAL} limit while its store is unavailable. */
		LOCAL_FALLBACK,

		/** A shadow policy, whose denials are recorded but not enforced. */
		SHADOW

	}

}
