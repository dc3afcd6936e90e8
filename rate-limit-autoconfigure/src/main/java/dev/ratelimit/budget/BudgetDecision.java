package dev.ratelimit.budget;

import java.util.Arrays;

/**
 * A budget's answer: whether a reservation was admitted, and for each of the
 * budget's limits (in the policy's order) what is spent, what remains and when
 * its window resets. Amounts are micro-units, times microseconds from now.
 *
 * @param allowed whether the reservation was admitted (always true for settle,
 * release and peek)
 * @param spentMicros settled spend per limit in the current window
 * @param reservedMicros the amount held by live reservations
 * @param remainingMicros what can still be reserved per limit (never negative)
 * @param resetAfterMicros time until each limit's window ends; 0 for a rolling
 * window that has not started
 * @param violated which limits refused the reservation
 * @param retryAfterMicros when a refused reservation could succeed; 0 when allowed
 */
public record BudgetDecision(boolean allowed, long[] spentMicros, long reservedMicros, long[] remainingMicros,
		long[] resetAfterMicros, boolean[] violated, long retryAfterMicros) {

	@Override
	public boolean equals(Object other) {
		return other instanceof BudgetDecision that && this.allowed == that.allowed
				&& Arrays.equals(this.spentMicros, that.spentMicros) && this.reservedMicros == that.reservedMicros
				&& Arrays.equals(this.remainingMicros, that.remainingMicros)
				&& Arrays.equals(this.resetAfterMicros, that.resetAfterMicros)
				&& Arrays.equals(this.violated, that.violated) && this.retryAfterMicros == that.retryAfterMicros;
	}

	@Override
	public int hashCode() {
		return Arrays.hashCode(this.spentMicros) * 31 + Long.hashCode(this.reservedMicros);
	}

	@Override
	public String toString() {
		return "BudgetDecision[allowed=" + this.allowed + ", spent=" + Arrays.toString(this.spentMicros)
				+ ", reserved=" + this.reservedMicros + ", remaining=" + Arrays.toString(this.remainingMicros)
				+ ", resetAfter=" + Arrays.toString(this.resetAfterMicros) + ", violated="
				+ Arrays.toString(this.violated) + ", retryAfter=" + this.retryAfterMicros + "]";
	}

}
