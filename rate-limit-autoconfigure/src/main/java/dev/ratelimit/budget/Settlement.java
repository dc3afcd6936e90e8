package dev.ratelimit.budget;

/**
 * A settle or a release that could not reach its store, kept until it answers
 * (see {@link dev.ratelimit.core.PendingWrites}).
 *
 * @param store the store that holds the reservation
 * @param policy the budget
 * @param key the storage key
 * @param id the reservation's id
 * @param actualMicros the actual cost to charge, 0 for a release
 * @param release whether the estimate is returned rather than settled
 */
record Settlement(BudgetStore store, BudgetPolicy policy, String key, String id, long actualMicros,
		boolean release) {

	/**
	 * Applies it to its store.
	 * @return the budget's state after it
	 */
	BudgetDecision apply() {
		return this.release ? this.store.release(this.policy, this.key, this.id)
				: this.store.settle(this.policy, this.key, this.id, this.actualMicros);
	}

}
