package dev.ratelimit.budget;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * The state of one budget key, and the reserve-then-settle logic over it, in
 * integer micro-units. Mirrored line by line in
 * {@code META-INF/scripts/budget.lua}, so both backends decide alike.
 * <p>
 * Per limit it keeps the current window and the settled spend in it; across
 * limits it keeps the live reservations (amount and lease expiry), whose total
 * counts against every limit, and the ids of recently settled or released
 * reservations, so that settling twice charges once. Not thread-safe: callers
 * hold the state's monitor.
 */
public final class BudgetState {

	static final long NONE = Long.MIN_VALUE;

	private final long[] windowStart;

	private final long[] windowEnd;

	private final long[] spent;

	private long reserved;

	// Insertion order is expiry order: every lease and marker lasts the policy's reservation timeout.
	private final Map<String, long[]> leases = new LinkedHashMap<>();

	private final Map<String, Long> done = new LinkedHashMap<>();

	/**
	 * Creates the state of a budget key never charged.
	 * @param limits the number of limits of the budget
	 */
	public BudgetState(int limits) {
		this.windowStart = new long[limits];
		this.windowEnd = new long[limits];
		this.spent = new long[limits];
		java.util.Arrays.fill(this.windowStart, NONE);
		java.util.Arrays.fill(this.windowEnd, NONE);
	}

	/**
	 * Reserves an estimate if every limit has room for it: spent + reserved +
	 * estimate within the amount.
	 * @param policy the budget
	 * @param spans the calendar windows around now, per limit ({@code null} for rolling ones)
	 * @param id the reservation's id
	 * @param estimate the amount to reserve
	 * @param now the current time
	 * @return the decision
	 */
	public BudgetDecision reserve(BudgetPolicy policy, BudgetWindow.Span[] spans, String id, long estimate,
			long now) {
		normalize(policy, spans, now);
		if (this.leases.containsKey(id) || this.done.containsKey(id)) {
			return decision(policy, true, null, 0, now);
		}
		List<BudgetLimit> limits = policy.limits();
		boolean[] violated = new boolean[limits.size()];
		boolean allowed = true;
		long retryAfter = 0;
		for (int i = 0; i < limits.size(); i++) {
			long amount = limits.get(i).amountMicros();
			if (this.spent[i] + this.reserved + estimate > amount) {
				violated[i] = true;
				allowed = false;
				retryAfter = Math.max(retryAfter, retryAfter(i, amount, estimate, now));
			}
		}
		if (!allowed) {
			return decision(policy, false, violated, retryAfter, now);
		}
		startRollingWindows(policy, now);
		this.reserved += estimate;
		this.leases.put(id, new long[] { estimate, now + policy.reservationTimeoutMicros() });
		return decision(policy, true, violated, 0, now);
	}

	/**
	 * Settles a reservation to the actual cost: its estimate is released and the
	 * actual charged to every limit. Settling an id a second time changes nothing;
	 * settling an id whose lease already expired charges the actual cost (the money
	 * was spent).
	 * @param policy the budget
	 * @param spans the calendar windows around now
	 * @param id the reservation's id
	 * @param actual the actual cost
	 * @param now the current time
	 * @return the decision, always allowed
	 */
	public BudgetDecision settle(BudgetPolicy policy, BudgetWindow.Span[] spans, String id, long actual, long now) {
		normalize(policy, spans, now);
		if (this.done.containsKey(id)) {
			return decision(policy, true, null, 0, now);
		}
		long[] lease = this.leases.remove(id);
		if (lease != null) {
			this.reserved -= lease[0];
		}
		startRollingWindows(policy, now);
		for (int i = 0; i < this.spent.length; i++) {
			this.spent[i] += actual;
		}
		this.done.put(id, now + policy.reservationTimeoutMicros());
		return decision(policy, true, null, 0, now);
	}

	/**
	 * Adds to a live reservation if every limit has room for the addition
	 * (spent + reserved + more within the amount), and renews its lease: a
	 * stream that outgrew its estimate reserves more as it goes. A reservation
	 * that is no longer live (settled, released or expired) is refused, so that
	 * work whose lease lapsed stops rather than spends unreserved.
	 * @param policy the budget
	 * @param spans the calendar windows around now
	 * @param id the reservation's id
	 * @param more the amount to add, 0 to renew the lease only
	 * @param now the current time
	 * @return the decision: allowed when the reservation grew
	 */
	public BudgetDecision extend(BudgetPolicy policy, BudgetWindow.Span[] spans, String id, long more, long now) {
		normalize(policy, spans, now);
		List<BudgetLimit> limits = policy.limits();
		boolean[] violated = new boolean[limits.size()];
		long[] lease = this.leases.get(id);
		if (lease == null) {
			return decision(policy, false, violated, 0, now);
		}
		boolean allowed = true;
		for (int i = 0; i < limits.size(); i++) {
			if (this.spent[i] + this.reserved + more > limits.get(i).amountMicros()) {
				violated[i] = true;
				allowed = false;
			}
		}
		if (!allowed) {
			return decision(policy, false, violated, 0, now);
		}
		this.reserved += more;
		// Removed and put back: insertion order stays expiry order.
		this.leases.remove(id);
		this.leases.put(id, new long[] { lease[0] + more, now + policy.reservationTimeoutMicros() });
		return decision(policy, true, violated, 0, now);
	}

	/**
	 * Releases a reservation without charging it. Releasing twice, or after a
	 * settle, changes nothing.
	 * @param policy the budget
	 * @param spans the calendar windows around now
	 * @param id the reservation's id
	 * @param now the current time
	 * @return the decision, always allowed
	 */
	public BudgetDecision release(BudgetPolicy policy, BudgetWindow.Span[] spans, String id, long now) {
		normalize(policy, spans, now);
		if (!this.done.containsKey(id)) {
			long[] lease = this.leases.remove(id);
			if (lease != null) {
				this.reserved -= lease[0];
			}
			this.done.put(id, now + policy.reservationTimeoutMicros());
		}
		return decision(policy, true, null, 0, now);
	}

	/**
	 * Reports the state without changing it (beyond bringing it up to date).
	 * @param policy the budget
	 * @param spans the calendar windows around now
	 * @param now the current time
	 * @return the decision, always allowed
	 */
	public BudgetDecision peek(BudgetPolicy policy, BudgetWindow.Span[] spans, long now) {
		normalize(policy, spans, now);
		return decision(policy, true, null, 0, now);
	}

	/**
	 * Returns whether a reservation was taken on this state and is still held
	 * by it: live, or settled or released recently enough that its marker is
	 * still kept. An expired one is held no more, even before it is cleared: its
	 * key may decide elsewhere by now (its own entry, after an overflow slot),
	 * and a late settle must be charged where it does.
	 * @param id the reservation's id
	 * @param now the current time
	 * @return whether this state holds it
	 */
	boolean holds(String id, long now) {
		long[] lease = this.leases.get(id);
		if (lease != null) {
			return lease[1] > now;
		}
		Long done = this.done.get(id);
		return done != null && done > now;
	}

	/**
	 * Returns when this state can be forgotten without changing any decision:
	 * when every window has ended and every lease and settled marker expired.
	 * @param policy the budget this state belongs to
	 * @return the time in microseconds, or {@link Long#MIN_VALUE} when it is fresh already
	 */
	public long forgettableAt(BudgetPolicy policy) {
		long at = NONE;
		List<BudgetLimit> limits = policy.limits();
		for (int i = 0; i < this.spent.length; i++) {
			// A started rolling window, even with nothing spent, fixes where later charges
			// fall and the reset time every decision reports.
			boolean rollingStarted = limits.get(i).window().kind() == BudgetWindow.Kind.ROLLING
					&& this.windowStart[i] != NONE;
			if (this.spent[i] > 0 || rollingStarted) {
				at = Math.max(at, this.windowEnd[i]);
			}
		}
		for (long[] lease : this.leases.values()) {
			at = Math.max(at, lease[1]);
		}
		for (long expiry : this.done.values()) {
			at = Math.max(at, expiry);
		}
		return at;
	}

	/**
	 * Expires dead leases (their amount returns) and settled markers, and moves
	 * every limit to the window containing now.
	 */
	private void normalize(BudgetPolicy policy, BudgetWindow.Span[] spans, long now) {
		for (Iterator<long[]> it = this.leases.values().iterator(); it.hasNext();) {
			long[] lease = it.next();
			if (lease[1] <= now) {
				this.reserved -= lease[0];
				it.remove();
			}
		}
		this.done.values().removeIf((expiry) -> expiry <= now);
		List<BudgetLimit> limits = policy.limits();
		for (int i = 0; i < limits.size(); i++) {
			if (limits.get(i).window().kind() == BudgetWindow.Kind.ROLLING) {
				if (this.windowStart[i] != NONE && now >= this.windowEnd[i]) {
					this.windowStart[i] = NONE;
					this.windowEnd[i] = NONE;
					this.spent[i] = 0;
				}
			}
			else {
				BudgetWindow.Span span = spans[i];
				long start = (now >= span.endMicros()) ? span.endMicros() : span.startMicros();
				long end = (now >= span.endMicros()) ? span.nextEndMicros() : span.endMicros();
				// Only forward: a clock that steps back over midnight must not wipe the new day's spend.
				if (start > this.windowStart[i]) {
					this.windowStart[i] = start;
					this.windowEnd[i] = end;
					this.spent[i] = 0;
				}
			}
		}
	}

	/** A rolling window starts with the first reservation or charge in it. */
	private void startRollingWindows(BudgetPolicy policy, long now) {
		List<BudgetLimit> limits = policy.limits();
		for (int i = 0; i < limits.size(); i++) {
			if (limits.get(i).window().kind() == BudgetWindow.Kind.ROLLING && this.windowStart[i] == NONE) {
				this.windowStart[i] = now;
				this.windowEnd[i] = now + limits.get(i).window().rollingMicros();
			}
		}
	}

	/**
	 * When limit {@code i} could admit {@code estimate}: at the window's end when
	 * settled spend alone leaves no room, else when the oldest live reservation's
	 * lease runs out (it may settle sooner).
	 */
	private long retryAfter(int i, long amount, long estimate, long now) {
		long untilWindowEnds = (this.windowStart[i] != NONE) ? this.windowEnd[i] - now : 0;
		if (this.spent[i] + estimate > amount || this.leases.isEmpty()) {
			return Math.max(untilWindowEnds, 1);
		}
		long untilLeaseEnds = this.leases.values().iterator().next()[1] - now;
		return Math.max(1, (untilWindowEnds > 0) ? Math.min(untilWindowEnds, untilLeaseEnds) : untilLeaseEnds);
	}

	private BudgetDecision decision(BudgetPolicy policy, boolean allowed, boolean @Nullable [] violated, long retryAfter,
			long now) {
		int n = this.spent.length;
		long[] remaining = new long[n];
		long[] resetAfter = new long[n];
		for (int i = 0; i < n; i++) {
			remaining[i] = Math.max(0, policy.limits().get(i).amountMicros() - this.spent[i] - this.reserved);
			resetAfter[i] = (this.windowStart[i] != NONE) ? Math.max(0, this.windowEnd[i] - now) : 0;
		}
		return new BudgetDecision(allowed, this.spent.clone(), this.reserved, remaining, resetAfter,
				(violated != null) ? violated : new boolean[n], retryAfter);
	}

}
