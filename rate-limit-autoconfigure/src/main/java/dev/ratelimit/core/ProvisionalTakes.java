package dev.ratelimit.core;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;

/**
 * The units a call took provisionally, for the policies that count it by its
 * outcome: taken before the call, like any other, so that the call is refused
 * before it runs once the limit is reached, and given back after it when its
 * outcome does not count (a successful login against a limit of failed ones).
 * Settle once the outcome is known; the first settle counts, later ones do
 * nothing. A call never settled keeps its units counted, which never exceeds
 * the limit.
 */
public final class ProvisionalTakes {

	/** Nothing taken provisionally. */
	public static final ProvisionalTakes NONE = new ProvisionalTakes(null, List.of());

	private final @Nullable RateLimiter limiter;

	private final List<Taken> taken;

	private final AtomicBoolean settled = new AtomicBoolean();

	ProvisionalTakes(@Nullable RateLimiter limiter, List<Taken> taken) {
		this.limiter = limiter;
		this.taken = List.copyOf(taken);
	}

	/** @return whether nothing was taken provisionally */
	public boolean isEmpty() {
		return this.taken.isEmpty();
	}

	/**
	 * Returns the names of the policies that took units provisionally.
	 * @return the policy names, in the order the policies were applied
	 */
	public List<String> policyNames() {
		return this.taken.stream().map((t) -> t.policy().name()).toList();
	}

	/**
	 * Keeps the units of the policies whose outcome counts and gives back the
	 * others'. A give-back that fails leaves the units counted; it is logged and
	 * reported to the {@link LimitListener}, never thrown.
	 * @param counts whether the call counts against the policy of this name
	 */
	public void settle(Predicate<String> counts) {
		if (this.taken.isEmpty() || !this.settled.compareAndSet(false, true)) {
			return;
		}
		for (Taken units : this.taken) {
			if (!counts.test(units.policy().name())) {
				Objects.requireNonNull(this.limiter, "takes come from a limiter").giveBack(units);
			}
		}
	}

	@Override
	public String toString() {
		return "ProvisionalTakes" + policyNames();
	}

	/**
	 * Units one policy took for one call.
	 *
	 * @param policy the policy that took them (a local share when the local
	 * fallback decided)
	 * @param key the storage key
	 * @param cost the units
	 * @param receipt the backend's receipt
	 * @param local whether the local fallback took them
	 */
	record Taken(RateLimitPolicy policy, String key, long cost, String receipt, boolean local) {
	}

}
