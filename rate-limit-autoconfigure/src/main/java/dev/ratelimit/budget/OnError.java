package dev.ratelimit.budget;

/**
 * What a budget charges when the budgeted call throws and its actual cost
 * cannot be computed from the exception.
 */
public enum OnError {

	/**
	 * Charge the estimate: the work may have cost money before it failed (the
	 * provider was called), so the safe assumption for a spend cap is that it did.
	 */
	KEEP,

	/**
	 * Charge nothing: release the reservation, for calls that fail before any
	 * cost is incurred.
	 */
	RELEASE

}
